import fc from 'fast-check';
import { CitationStream, checkCitations, citableSources } from '#shared/chats/replies/citations.ts';
import { chunkPages } from '#shared/ingestion/chunker.ts';
import { normalisePageText } from '#shared/pdf/normalise.ts';
import { layoutOfItems, layoutOfWords, normaliseWithOrigins, rawFromPieces, spansOf } from '#shared/pdf/positions.ts';
import { countTextTokens } from '#shared/ingestion/chunk-tokens.ts';
import { boxesOf } from '#shared/retrieval/quote-boxes.ts';
import { pickQuote } from '#shared/retrieval/quote.ts';
import { knownSentence } from '#test/helpers/make-pdf.ts';

// Citation positions: normalisation replayed with each character's origin, spans → a quote's
// boxes, chunks' verbatim runs of page text, and the rule that only verified sources are citable.

const pieces = ['  Ligature ﬁle  ', 'inter-', 'preter is\u0001here', ' الــعربية ', 'e\u0301te ', '\u00a0 end.'];

test('normalisation replayed with origins gives normalisePageText exactly, each character from its piece', () => {
  const raw = rawFromPieces(pieces.map((str, i) => ({ str, after: i === 1 || i === 3 ? '\n' : undefined })));
  const normalised = normaliseWithOrigins(raw)!;
  expect(normalised.text).toBe(normalisePageText(raw.text));
  expect(normalised.text).toBe('Ligature file interpreter is here العربية éte end.');
  const from = (word: string) => [
    ...new Set(normalised.origins.slice(normalised.text.indexOf(word), normalised.text.indexOf(word) + word.length)),
  ];
  expect(from('file')).toEqual([0]);
  expect(from('interpreter')).toEqual([1, 2]); // joined across the line end
  expect(from('العربية')).toEqual([3]);
  expect(from('éte')).toEqual([4]);
});

test('for any text, the replay matches normalisePageText (or declines)', () => {
  fc.assert(
    fc.property(fc.array(fc.string({ unit: 'grapheme', maxLength: 12 }), { maxLength: 8 }), (strs) => {
      const raw = rawFromPieces(strs.map((str) => ({ str, after: '\n' })));
      const normalised = normaliseWithOrigins(raw);
      if (normalised) {
        expect(normalised.text).toBe(normalisePageText(raw.text));
        expect(normalised.origins.length).toBe(normalised.text.length);
      }
    }),
  );
});

test("a quote's boxes: spans cut by character where it starts or ends inside them, one box per line", () => {
  const raw = rawFromPieces([{ str: 'abcdefghij', after: ' ' }, { str: 'klmno', after: '\n' }, { str: 'second line' }]);
  const spans = spansOf(normaliseWithOrigins(raw)!, [
    { x: 0.1, y: 0.1, width: 0.5, height: 0.02 },
    { x: 0.65, y: 0.1, width: 0.2, height: 0.02 },
    { x: 0.1, y: 0.2, width: 0.4, height: 0.02 },
  ]);
  // "cdefg": characters 2..7 of the first item.
  expect(boxesOf(spans, 2, 7)).toEqual([{ x: 0.2, y: 0.1, width: 0.25, height: 0.02 }]);
  // "ij klm" then the whole second line: the two items of line one merge.
  expect(boxesOf(spans, 8, 28)).toEqual([
    { x: 0.5, y: 0.1, width: 0.35, height: 0.02 },
    { x: 0.1, y: 0.2, width: 0.4, height: 0.02 },
  ]);
  // Right to left (a negative width): the first characters are at the right end.
  expect(boxesOf([0, 10, 1000, 1000, -5000, 200], 0, 2)).toEqual([{ x: 0.5, y: 0.1, width: 0.1, height: 0.02 }]);
});

test('item boxes follow the page viewport (origin top-left); OCR word boxes are fractions of the image', () => {
  const viewport = { width: 600, height: 800, convertToViewportPoint: (x: number, y: number) => [x, 800 - y] };
  const items = [{ str: 'Hello', transform: [10, 0, 0, 10, 60, 700], width: 30, height: 10, hasEOL: true }];
  const layout = layoutOfItems(items, viewport, 'Hello');
  expect(layout).toMatchObject({ width: 600, height: 800 });
  expect(boxesOf(layout.spans, 0, 5)).toEqual([{ x: 0.1, y: 0.115, width: 0.05, height: 0.0125 }]);
  const ocr = layoutOfWords(
    'Ships shelter\nbehind',
    [
      { text: 'Ships', bbox: { x0: 100, y0: 50, x1: 200, y1: 80 } },
      { text: 'shelter', bbox: { x0: 220, y0: 50, x1: 360, y1: 80 } },
      { text: 'behind', bbox: { x0: 100, y0: 100, x1: 220, y1: 130 } },
    ],
    { width: 1000, height: 1000 },
    { width: 612, height: 792 },
    'Ships shelter behind',
  );
  expect(boxesOf(ocr.spans, 6, 20)).toEqual([
    { x: 0.22, y: 0.05, width: 0.14, height: 0.03 },
    { x: 0.1, y: 0.1, width: 0.12, height: 0.03 },
  ]);
  // Text that does not come from these pieces gets no spans (no wrong boxes).
  expect(layoutOfItems(items, viewport, 'Something else').spans).toEqual([]);
});

test('a right-to-left line put back in logical order: each word keeps its own item and box', () => {
  const viewport = { width: 600, height: 800, convertToViewportPoint: (x: number, y: number) => [x, 800 - y] };
  // Drawn in visual order: the last word leftmost.
  const line = [
    { str: 'עולם', dir: 'rtl', transform: [10, 0, 0, 10, 100, 700], width: 40, height: 10 },
    { str: ' ', transform: [10, 0, 0, 10, 140, 700], width: 5, height: 10 },
    { str: 'שלום', dir: 'rtl', transform: [10, 0, 0, 10, 145, 700], width: 40, height: 10, hasEOL: true },
  ];
  const text = normalisePageText(line.map((i) => i.str).join(''));
  const logical = 'שלום עולם';
  const layout = layoutOfItems(line, viewport, logical);
  expect(text).not.toBe(logical); // pdf.js order is visual; normalise.ts puts it back
  expect(boxesOf(layout.spans, 0, 4)).toEqual([{ x: 0.2417, y: 0.115, width: 0.0667, height: 0.0125 }]);
  expect(boxesOf(layout.spans, 5, 9)).toEqual([{ x: 0.1667, y: 0.115, width: 0.0667, height: 0.0125 }]);
  // The first letter of a right-to-left word is at its right end.
  expect(boxesOf(layout.spans, 0, 1)[0]!.x).toBeCloseTo(0.2917, 3);
});

test("chunks' runs are verbatim stretches of their pages' texts, also across pages; quotes stay within one run", () => {
  const pages = Array.from({ length: 4 }, (_, i) => ({
    page: i + 1,
    text: Array.from({ length: 9 }, (_, k) => knownSentence(i + 1, k)).join(' '),
  }));
  const chunks = chunkPages(pages, { chunkTokens: 200, overlapTokens: 40, countTokens: countTextTokens });
  expect(chunks.some((c) => c.pageEnd > c.page)).toBe(true);
  for (const chunk of chunks) {
    expect(chunk.runs!.reduce((n, [, length]) => n + length, 0) + chunk.runs!.length - 1).toBe(chunk.text.length);
    for (const [at, length, page, pageStart] of chunk.runs!)
      expect(chunk.text.slice(at, at + length)).toBe(pages[page - 1]!.text.slice(pageStart, pageStart + length));
  }
  // A page that ends without a full stop: the chunk's sentence splitting alone would join it to the next page's.
  const unended = [
    { page: 1, text: 'The first page ends mid way' },
    { page: 2, text: 'through a sentence and goes on here. Then more.' },
  ];
  const [chunk] = chunkPages(unended, { chunkTokens: 200, overlapTokens: 0, countTokens: countTextTokens });
  const { quote, offset } = pickQuote(
    chunk!.text,
    'mid way through',
    undefined,
    chunk!.runs!.map(([at]) => at),
  );
  expect(quote).toBe('The first page ends mid way');
  expect(offset).toBe(0);
});

test('markers only ever point at verified sources, whole and streamed', () => {
  const sources = [{ verified: true }, { verified: false }, {}];
  const citable = citableSources(sources);
  const reply = 'Verified [1], unverified [2], unknown [3], both [1, 2].';
  const whole = checkCitations(reply, citable);
  expect(whole.text).toBe('Verified [1], unverified , unknown , both [1].');
  expect([...whole.cited]).toEqual([1]);
  const stream = new CitationStream(citable);
  const streamed = [...reply].map((c) => stream.push(c)).join('') + stream.end();
  expect(streamed).toBe(whole.text);
  expect([...stream.cited]).toEqual([1]);
});
