import { PDFDocument, StandardFonts } from 'pdf-lib';
import { accurate, type Box, coverage, lineExtents, PdfLayout } from '../../bench/lib/glyph-boxes.ts';

// The eval's own ground truth for box accuracy (bench/lib/glyph-boxes.ts): where a quote's glyphs
// are on a page drawn at known places, and which boxes count as covering them.

const SIZE = 20;
let layout: PdfLayout;
let widthOf: (text: string) => number;

beforeAll(async () => {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  widthOf = (text) => font.widthOfTextAtSize(text, SIZE);
  const page = doc.addPage([612, 792]);
  page.drawText('Alpha beta gamma', { x: 100, y: 700, size: SIZE, font });
  page.drawText('delta epsilon', { x: 100, y: 670, size: SIZE, font });
  // A table row: two cells far apart on one line.
  page.drawText('Peduci', { x: 100, y: 600, size: SIZE, font });
  page.drawText('231 m', { x: 400, y: 600, size: SIZE, font });
  layout = new PdfLayout(await doc.save());
});
afterAll(() => layout.close());

/** One box around the given glyphs. */
const around = (glyphs: Box[]): Box => {
  const x = Math.min(...glyphs.map((g) => g.x));
  const y = Math.min(...glyphs.map((g) => g.y));
  return {
    x,
    y,
    width: Math.max(...glyphs.map((g) => g.x + g.width)) - x,
    height: Math.max(...glyphs.map((g) => g.y + g.height)) - y,
  };
};

test("a quote's glyphs are where the page draws them: fractions of the page, origin top-left, one per letter", async () => {
  const glyphs = (await layout.quoteGlyphs(1, 'beta gamma'))!;
  expect(glyphs).toHaveLength('betagamma'.length);
  const perChar = widthOf('Alpha beta gamma') / 'Alpha beta gamma'.length;
  // The first glyph starts where "Alpha " ends, give or take a character (a glyph's share of its item).
  expect(Math.abs(glyphs[0]!.x * 612 - (100 + widthOf('Alpha ')))).toBeLessThan(perChar);
  expect(Math.abs((glyphs.at(-1)!.x + glyphs.at(-1)!.width) * 612 - (100 + widthOf('Alpha beta gamma')))).toBeLessThan(
    1,
  );
  // From a fifth of the size below the baseline to 0.8 above it, measured from the top.
  for (const g of glyphs) {
    expect(g.y * 792).toBeCloseTo(792 - 700 - 0.8 * SIZE, 3);
    expect(g.height * 792).toBeCloseTo(SIZE, 3);
  }
});

test('a quote is found whatever its case, spacing and punctuation, across lines; one not on the page is not', async () => {
  const glyphs = (await layout.quoteGlyphs(1, 'GAMMA,\n  delta'))!;
  expect(glyphs).toHaveLength('gammadelta'.length);
  expect(new Set(glyphs.map((g) => g.y.toFixed(4))).size).toBe(2);
  expect(await layout.quoteGlyphs(1, 'beta delta')).toBeUndefined();
});

test('boxes are accurate when they cover every glyph and are not much larger than the quote', async () => {
  const glyphs = (await layout.quoteGlyphs(1, 'gamma delta epsilon'))!;
  const [first, second] = [glyphs.slice(0, 5), glyphs.slice(5)];
  const lines = [around(first), around(second)];
  expect(coverage(lines, glyphs)).toMatchObject({ covered: 1 });
  expect(accurate(coverage(lines, glyphs))).toBe(true);

  // The second line missing: only "gamma" covered.
  expect(coverage(lines.slice(0, 1), glyphs).covered).toBeCloseTo(5 / glyphs.length, 10);
  expect(accurate(coverage(lines.slice(0, 1), glyphs))).toBe(false);

  // A box over the whole page covers everything and says nothing.
  const page = [{ x: 0, y: 0, width: 1, height: 1 }];
  expect(coverage(page, glyphs).covered).toBe(1);
  expect(accurate(coverage(page, glyphs))).toBe(false);

  // A table row's box spans the gap between its cells: still the quote's line, accurate.
  const row = (await layout.quoteGlyphs(1, 'Peduci 231 m'))!;
  expect(lineExtents(row)).toHaveLength(1);
  expect(accurate(coverage(lineExtents(row), row))).toBe(true);

  // No boxes at all.
  expect(accurate(coverage([], glyphs))).toBe(false);
});
