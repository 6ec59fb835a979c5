import { judgePageText } from '#shared/pdf/text-quality.ts';
import { joinItems, normalisePageText, readPageText } from '#shared/pdf/normalise.ts';
import { words } from '#shared/ai/lexical-embedding.ts';
import { splitSentences } from '#shared/sentences.ts';
import { extractText } from '#shared/pdf/extract.ts';
import { fixturePdf, knownSentence } from '#test/helpers/make-pdf.ts';
import {
  ARABIC_PAGES,
  JAPANESE_PAGES,
  makeArabicPdf,
  makeGlyphIdPdf,
  makeJapanesePdf,
  shapeArabicWord,
} from '#test/helpers/make-script-pdfs.ts';

// The per-page text-quality check and the normalisation of page text (NFKC, right-to-left lines,
// CJK CMaps), on strings and on real PDFs through pdf.js.

const PROSE = 'Trace-based compilation records the hot loops of a program and compiles them to machine code.';

describe('judgePageText', () => {
  test.each([
    ['English prose', PROSE],
    ['German', 'Größere Dateien werden in mehrere Teile zerlegt und parallel verarbeitet, während der Nutzer wartet.'],
    ['Japanese', JAPANESE_PAGES[0]!],
    ['Arabic', ARABIC_PAGES[1]!],
    ['Russian', 'Большие файлы делятся на части, которые обрабатываются параллельно.'],
    ['a table of figures', 'Year 2021 2022 2023 Revenue 1,204 1,310 1,498 Costs 880 912 1,003'],
    ['made-up words', knownSentence(3, 4)],
  ])('accepts %s', (_, text) => {
    expect(judgePageText(text)).toEqual({ usable: true });
  });

  test.each([
    ['an empty page', '', 'empty'],
    ['a page number only', ' 12 ', 'empty'],
    [
      'glyph ids as control characters (a font without a Unicode map)',
      '\u0015\b\u0014\u0015\u0005 \u0003\u0004\u0006\u0007 \u0012\u0013\u0001',
      'control',
    ],
    ['private-use code points', '\ue001\ue002\ue003 \ue004\ue005 abc \ue006\ue007', 'private-use'],
    ['replacement characters', 'Th\ufffd \ufffd\ufffdt\ufffd \ufffdf the \ufffd\ufffdge', 'replacement'],
    ['glyph names', '/g3/g4/g5 /g12/g9 /g33/g40/g41/g2', 'glyph-names'],
    ['symbol soup', '#$%& *+,-./: ;<=>? @[\\]^ {|}~ #$%& abc', 'implausible'],
    [
      'consonants without vowels (letters that spell nothing)',
      'Hwkx prtz bldfkgh zxcvbnm qwrtplkj hgfdszxcv bnmklp trwqzx vbnmcx lkjhgfdsz',
      'implausible',
    ],
  ])('rejects %s', (_, text, reason) => {
    expect(judgePageText(text)).toEqual({ usable: false, reason });
  });
});

describe('page text normalisation', () => {
  test('NFKC turns Arabic presentation forms and ligatures into the letters a user types', () => {
    const shaped = 'القاهرة'
      .split(' ')
      .map((w) => shapeArabicWord(w).join(''))
      .join(' ');
    expect(shaped).not.toBe('القاهرة'); // presentation forms: no word typed in Arabic matches them
    expect(normalisePageText(shaped)).toBe('القاهرة');
    expect(normalisePageText('ﬁnal ＡＢＣ')).toBe('final ABC');
  });

  test('a right-to-left line whose runs came in drawing (visual) order is put in logical order by position', () => {
    // Three words drawn left to right (the sentence's last word first), each in logical order inside.
    const items = [
      { str: 'مصر', transform: [20, 0, 0, 20, 370, 700], width: 30, height: 20 },
      { str: 'عاصمة', transform: [20, 0, 0, 20, 410, 700], width: 50, height: 20 },
      { str: 'القاهرة', transform: [20, 0, 0, 20, 470, 700], width: 70, height: 20, hasEOL: true },
      { str: 'Page 1', transform: [10, 0, 0, 10, 300, 40], width: 30, height: 10 },
    ];
    expect(joinItems(items)).toBe('القاهرة عاصمة مصر\nPage 1');
  });

  test('left-to-right lines keep their order; a hyphen at a line end joins the word', () => {
    const items = [{ str: 'the inter-', hasEOL: true }, { str: 'preter runs' }];
    expect(readPageText(items)).toEqual({ text: 'the interpreter runs', verdict: { usable: true } });
  });

  test('CJK runs are indexed as character pairs; Arabic without optional vowel marks', () => {
    expect(words('金閣寺は有名です')).toEqual(['金閣', '閣寺', '寺は', 'は有', '有名', '名で', 'です']);
    expect(words('كِتَاب')).toEqual(words('كتاب'));
    expect(words('Hello, World')).toEqual(['hello', 'world']);
  });

  test('a Japanese full stop ends a sentence without a space after it', () => {
    expect(splitSentences(JAPANESE_PAGES[1]!)).toEqual(['京都には古い寺がたくさんあります。', '金閣寺は有名です。']);
  });
});

describe('extraction of generated PDFs through pdf.js', () => {
  const pagesOf = async (pdf: Uint8Array) => {
    const out: { page: number; text: string; usable: boolean }[] = [];
    await extractText(pdf, {
      maxPages: 100,
      onPage: (page, text, verdict) => void out.push({ page, text, usable: verdict.usable }),
    });
    return out;
  };

  test('Japanese text in a font with a predefined CMap (UniJIS-UCS2-H) comes out with the shipped CMaps', async () => {
    expect(await pagesOf(makeJapanesePdf())).toEqual(
      JAPANESE_PAGES.map((text, i) => ({ page: i + 1, text, usable: true })),
    );
  });

  test('Arabic in presentation forms comes out as typed letters, in logical order', async () => {
    expect(await pagesOf(makeArabicPdf())).toEqual(
      ARABIC_PAGES.map((text, i) => ({ page: i + 1, text, usable: true })),
    );
  });

  test('a font without a Unicode map is judged unusable, not passed on as text', async () => {
    expect(await pagesOf(await makeGlyphIdPdf())).toEqual([
      { page: 1, text: '', usable: false },
      { page: 2, text: '', usable: false },
    ]);
  });

  test('a real paper (tracemonkey) is usable on every page', async () => {
    const pages = await pagesOf(new Uint8Array(await fixturePdf('tracemonkey.pdf')));
    expect(pages).toHaveLength(14);
    expect(pages.filter((p) => !p.usable)).toEqual([]);
  });
});
