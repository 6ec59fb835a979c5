import { PDFDocument, StandardFonts } from 'pdf-lib';
import { extractText } from '#shared/pdf/extract.ts';
import { chunkPages } from '#shared/ingestion/chunker.ts';
import type { PageBlock } from '#shared/pdf/layout/page-layout.ts';
import { SectionPath } from '#shared/pdf/layout/sections.ts';
import { countTextTokens } from '#shared/ingestion/chunk-tokens.ts';
import { pickQuote } from '#shared/retrieval/quote.ts';
import {
  knownSentence,
  makeTablePdf,
  TABLE_HEADER,
  type TableFixture,
  tableMarkdownRow,
  tableRow,
} from '#test/helpers/make-pdf.ts';

// Page layout from pdf.js text positions (shared/pdf/layout/): tables recognised as Markdown rows,
// headings and their path, and how the chunker cuts them. Through pdf.js on generated PDFs.

interface ReadPage {
  page: number;
  text: string;
  blocks?: PageBlock[];
}

async function readPages(pdf: Uint8Array): Promise<ReadPage[]> {
  const pages: ReadPage[] = [];
  await extractText(pdf, {
    maxPages: 20,
    onPage: (page, text, _verdict, _layout, blocks) => void pages.push({ page, text, blocks }),
  });
  return pages;
}

const tablesOf = (page: ReadPage) => (page.blocks ?? []).filter((b) => b.kind === 'table');

/** A one-page PDF drawn by `draw` (Helvetica 11 pt; `bold` for styled lines). */
async function pdfOf(
  draw: (p: {
    text: (s: string, x: number, y: number, bold?: boolean) => void;
    /** Width of the text in points. */
    width: (s: string) => number;
  }) => void,
): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const boldFont = await doc.embedFont(StandardFonts.HelveticaBold);
  const page = doc.addPage([612, 792]);
  draw({
    text: (s, x, y, bold) => page.drawText(s, { x, y, size: 11, font: bold ? boldFont : font }),
    width: (s) => font.widthOfTextAtSize(s, 11),
  });
  return doc.save();
}

describe('tables', () => {
  test('a table drawn row by row comes out as Markdown rows, header first, in the page text', async () => {
    const fixture = await makeTablePdf(6);
    const [page] = await readPages(fixture.bytes);
    const tables = tablesOf(page!);
    expect(tables).toHaveLength(1);
    const rows = [TABLE_HEADER, ...Array.from({ length: 6 }, (_, i) => tableRow(i))].map(tableMarkdownRow);
    expect(tables[0]!.kind === 'table' && tables[0]!.rows.map((r) => r.text)).toEqual(rows);
    // The rows stand in the page's text as they do in chunks, one per line.
    expect(page!.text).toContain(rows.join('\n'));
  });

  test('each cell keeps the indices of the pdf.js items it was read from', async () => {
    const fixture = await makeTablePdf(3);
    const [page] = await readPages(fixture.bytes);
    const table = tablesOf(page!)[0]!;
    if (table.kind !== 'table') throw new Error('no table');
    const indices = table.rows.flatMap((r) => r.cells.map((c) => c.items));
    for (const items of indices) expect(items.length).toBeGreaterThan(0);
    // No item is in two cells, and the cells follow the drawing order.
    const flat = indices.flat();
    expect(new Set(flat).size).toBe(flat.length);
    expect(flat).toEqual([...flat].sort((a, b) => a - b));
  });

  test('two-column prose drawn line by line across both columns is not a table', async () => {
    const pdf = await pdfOf(({ text, width }) => {
      // Columns 240 pt wide with an 18 pt gutter; each line as many words as fit (seven or eight).
      const fitted = (sentence: string) => {
        const words = sentence.split(' ');
        while (width(words.join(' ')) > 240) words.pop();
        return words.join(' ');
      };
      for (let i = 0; i < 12; i++) {
        text(fitted(`${knownSentence(1, i)} ${knownSentence(3, i)}`), 56, 740 - i * 14);
        text(fitted(`${knownSentence(2, i)} ${knownSentence(4, i)}`), 314, 740 - i * 14);
      }
    });
    const [page] = await readPages(pdf);
    expect(tablesOf(page!)).toEqual([]);
    expect(page!.text).not.toContain('|');
  });

  test('a numbered list with its numbers set apart from the items is not a table', async () => {
    const pdf = await pdfOf(({ text }) => {
      for (let i = 0; i < 6; i++) {
        text(`${i + 1}.`, 56, 740 - i * 14);
        text(`Item ${i + 1}`, 90, 740 - i * 14);
      }
    });
    const [page] = await readPages(pdf);
    expect(tablesOf(page!)).toEqual([]);
    expect(page!.text).toBe('1. Item 1 2. Item 2 3. Item 3 4. Item 4 5. Item 5 6. Item 6');
  });

  test('two aligned rows are not enough for a table', async () => {
    const pdf = await pdfOf(({ text }) => {
      text('Name', 56, 740);
      text('Value', 200, 740);
      text('Alpha', 56, 726);
      text('42', 200, 726);
    });
    const [page] = await readPages(pdf);
    expect(page!.blocks).toBeUndefined();
    expect(page!.text).toBe('Name Value Alpha 42');
  });
});

describe('sections', () => {
  test('headings are found by size and by a bold font at body size, and nest by numbering and size', async () => {
    const fixture = await makeTablePdf(4);
    const [page] = await readPages(fixture.bytes);
    const headings = page!.blocks!.filter((b) => b.kind === 'heading').map((b) => b.kind === 'heading' && b.text);
    expect(headings).toEqual(['1 Introduction', '2 Measurements', '2.1 Rainfall by station', '3 Discussion']);
    // A bold line at body size that is a table's header row is the table's, not a heading.
    expect(headings).not.toContain('Station');
  });

  test('the heading path: a heading closes those of its size or smaller, numbering decides between numbered ones', () => {
    const path = new SectionPath();
    const seen: (string | undefined)[] = [path.current];
    const enter = (text: string, size: number, styled = false) => {
      path.enter({ text, size, styled });
      seen.push(path.current);
    };
    enter('Report', 24);
    enter('1 Methods', 16);
    enter('1.1 Data', 11, true);
    enter('Sampling', 11, true); // unnumbered, same size as 1.1: its sibling
    enter('2 Results', 16);
    enter('2.1 Rain', 13);
    enter('2.1.1 Hail', 13); // same size, deeper number
    enter('3 Discussion', 16);
    expect(seen).toEqual([
      undefined,
      'Report',
      'Report > 1 Methods',
      'Report > 1 Methods > 1.1 Data',
      'Report > 1 Methods > Sampling',
      'Report > 2 Results',
      'Report > 2 Results > 2.1 Rain',
      'Report > 2 Results > 2.1 Rain > 2.1.1 Hail',
      'Report > 3 Discussion',
    ]);
  });

  test('chunks carry the section most of their text sits under', async () => {
    const fixture = await makeTablePdf(4);
    const pages = await readPages(fixture.bytes);
    const chunks = chunkPages(pages, { chunkTokens: 120, overlapTokens: 20, countTokens: countTextTokens });
    expect(chunks[0]!.section).toBe('1 Introduction');
    const withRow = chunks.find((c) => c.text.includes(tableMarkdownRow(tableRow(2))));
    expect(withRow?.section).toBe(fixture.tableSection);
    expect(chunks.at(-1)!.section).toBe(fixture.closingSection);
  });
});

describe('chunks of a table', () => {
  test('a long table split over chunks starts every chunk holding its rows with the header row', async () => {
    const fixture = await makeTablePdf(40);
    const pages = await readPages(fixture.bytes);
    const chunks = chunkPages(pages, { chunkTokens: 200, overlapTokens: 40, countTokens: countTextTokens });
    const header = tableMarkdownRow(TABLE_HEADER);
    const holding = chunks.filter((c) => /^\| (?!Station)/m.test(c.text));
    expect(holding.length).toBeGreaterThan(3);
    for (const chunk of holding) {
      const firstRow = chunk.text.split('\n').find((l) => l.startsWith('| '));
      expect(firstRow).toBe(header);
      expect(chunk.tokens).toBe(countTextTokens(chunk.text));
      expect(chunk.tokens).toBeLessThanOrEqual(200);
    }
    // Every row is in some chunk, whole.
    for (let i = 0; i < 40; i++)
      expect(chunks.some((c) => c.text.split('\n').includes(tableMarkdownRow(tableRow(i))))).toBe(true);
    // Chunks after the first of the table begin with the header itself.
    expect(holding.slice(1).every((c) => c.text.startsWith(`${header}\n`))).toBe(true);
  });

  test('the quote of a chunk holding a table is the row sharing the most words, not the header', () => {
    const header = tableMarkdownRow(TABLE_HEADER);
    const rows = [0, 1, 2].map((i) => tableMarkdownRow(tableRow(i)));
    const text = `Some prose before the table. ${'\n'}${header}\n${rows.join('\n')}`;
    const station = tableRow(1)[0]!;
    const { quote, offset } = pickQuote(text, `What is the rainfall at ${station}?`);
    expect(quote).toBe(rows[1]);
    expect(text.slice(offset, offset + quote.length)).toBe(quote);
  });
});

test("a chunk's section counts in its lexical score: a question naming the section finds the passages under it", async () => {
  const { buildLexicalIndex, bm25TopK, lexicalText } = await import('#shared/retrieval/lexical-index.ts');
  const { queryTerms } = await import('#shared/retrieval/terms.ts');
  const chunks = [
    { text: 'The samples were weighed twice and the mean was kept.', section: '2 Calibration' },
    { text: 'The samples were weighed twice and the mean was kept.', section: '3 Discussion' },
  ];
  const hits = bm25TopK([buildLexicalIndex(chunks.map(lexicalText))], queryTerms('calibration of samples'), 2);
  expect(hits.map((h) => h.row)).toEqual([0, 1]);
  expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
});

describe('a table running over pages', () => {
  const header = tableMarkdownRow(TABLE_HEADER);
  const chunksOf = async (fixture: TableFixture) =>
    chunkPages(await readPages(fixture.bytes), { chunkTokens: 200, overlapTokens: 40, countTokens: countTextTokens });

  test('the header the document repeats on the next page is not repeated inside a chunk', async () => {
    const fixture = await makeTablePdf(90);
    expect(fixture.rowPages.at(-1)).toBeGreaterThan(2);
    for (const chunk of await chunksOf(fixture))
      expect(chunk.text.split('\n').filter((l) => l === header).length).toBeLessThanOrEqual(1);
  });

  test("rows on the next page without a header of their own come under the first page's header", async () => {
    const fixture = await makeTablePdf(90, { headerOnEveryPage: false });
    const firstOnPage2 = fixture.rowPages.indexOf(2);
    const chunks = await chunksOf(fixture);
    const holding = chunks.filter((c) => c.text.includes(tableMarkdownRow(tableRow(firstOnPage2 + 3))));
    expect(holding.length).toBeGreaterThan(0);
    for (const chunk of holding) expect(chunk.text.split('\n').find((l) => l.startsWith('| '))).toBe(header);
  });
});
