import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { PDFDocument, StandardFonts } from 'pdf-lib';

// PDFs for the tests: the real-world fixtures in test/fixtures/pdfs (origins in its README) and
// generated text PDFs whose every page carries sentences that are known in advance.

const FIXTURES = fileURLToPath(new URL('../fixtures/pdfs/', import.meta.url));

/** A fixture PDF's bytes (test/fixtures/pdfs). */
export async function fixturePdf(name: string): Promise<Buffer> {
  return readFile(`${FIXTURES}${name}`);
}

// Made-up words (three syllables, 8,000 of them), drawn per sentence by a seeded generator: text
// with a varied vocabulary, like real prose, so a sentence's words say where it is.
const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'ta',
  'vi',
  'so',
  'pe',
  'du',
  'ga',
  'fi',
  'zo',
  'be',
  'xu',
  'ye',
  'wa',
  'jo',
  'ha',
  'ci',
];
const word = (n: number) =>
  SYLLABLES[n % 20]! + SYLLABLES[Math.floor(n / 20) % 20]! + SYLLABLES[Math.floor(n / 400) % 20]!;

/** The known sentence `i` of page `page` (1-based): nine made-up words and its folio. */
export function knownSentence(page: number, i: number): string {
  let x = (page * 7919 + i * 104729) >>> 0;
  const words: string[] = [];
  for (let w = 0; w < 9; w++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    words.push(word(x % 8000));
  }
  const first = words[0]!;
  words[0] = first[0]!.toUpperCase() + first.slice(1);
  return `${words.join(' ')} (folio ${page}.${i}).`;
}

/** A text PDF of `pages` pages, each with `sentencesPerPage` known sentences (Helvetica, one line each). */
export async function makeTextPdf(pages: number, sentencesPerPage = 12): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let page = 1; page <= pages; page++) {
    const p = doc.addPage([612, 792]);
    let y = 740;
    for (let i = 0; i < sentencesPerPage; i++) {
      p.drawText(knownSentence(page, i), { x: 48, y, size: 11, font });
      y -= 18;
    }
  }
  return doc.save();
}

/** A text PDF whose pages hold the given lines (Helvetica, one line each; WinAnsi characters only). */
export async function makePdfFromLines(pages: string[][]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const lines of pages) {
    const p = doc.addPage([612, 792]);
    let y = 740;
    for (const line of lines) {
      p.drawText(line, { x: 48, y, size: 11, font });
      y -= 18;
    }
  }
  return doc.save();
}

/** The table fixture's columns (its header row). */
export const TABLE_HEADER = ['Station', 'Elevation', 'Rainfall', 'Season'] as const;

/** Row `i` (0-based) of the table fixture: a made-up station name, so a question names one row. */
export function tableRow(i: number): string[] {
  const name = word((i * 7919 + 31) % 8000);
  return [
    name[0]!.toUpperCase() + name.slice(1),
    `${120 + ((i * 37) % 900)} m`,
    `${3 + ((i * 13) % 97)}.${i % 10} mm`,
    ['winter', 'spring', 'summer', 'autumn'][i % 4]!,
  ];
}

/** The Markdown row of a table fixture row as the service's page text and chunks hold it. */
export const tableMarkdownRow = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;

/** Where each piece of the table fixture is, for tests and the evaluation. */
export interface TableFixture {
  bytes: Uint8Array;
  /** Page (1-based) of each row of the table (row i → rowPages[i]). */
  rowPages: number[];
  /** The heading path the table sits under. */
  tableSection: string;
  /** The heading path of the prose after the table. */
  closingSection: string;
}

/**
 * A report with headings and a table: "1 Introduction" (bold, 16 pt) and prose; "2 Measurements"
 * (16 pt) with "2.1 Rainfall by station" (bold at body size) and a table of `rows` rows and four
 * columns (TABLE_HEADER, tableRow), drawn row by row with wide gaps between columns and its header
 * repeated on every page it runs over; then "3 Discussion" and prose. Helvetica 11 pt body.
 */
export async function makeTablePdf(rows = 12): Promise<TableFixture> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const columns = [56, 190, 300, 410];
  let page = doc.addPage([612, 792]);
  let pageNo = 1;
  let y = 740;
  const line = (text: string, size = 11, f = font, gap = 18) => {
    page.drawText(text, { x: 56, y, size, font: f });
    y -= gap;
  };
  const row = (cells: readonly string[], f = font) => {
    cells.forEach((cell, k) => page.drawText(cell, { x: columns[k]!, y, size: 11, font: f }));
    y -= 16;
  };
  line('1 Introduction', 16, bold, 24);
  for (let i = 0; i < 4; i++) line(knownSentence(1, i));
  y -= 8;
  line('2 Measurements', 16, bold, 24);
  line(knownSentence(1, 4));
  line('2.1 Rainfall by station', 11, bold);
  line('The table lists each station with its elevation, its rainfall and its wettest season.');
  y -= 6;
  row(TABLE_HEADER, bold);
  const rowPages: number[] = [];
  for (let i = 0; i < rows; i++) {
    if (y < 72) {
      page = doc.addPage([612, 792]);
      pageNo++;
      y = 740;
      row(TABLE_HEADER, bold);
    }
    row(tableRow(i));
    rowPages.push(pageNo);
  }
  y -= 12;
  if (y < 140) {
    page = doc.addPage([612, 792]);
    pageNo++;
    y = 740;
  }
  line('3 Discussion', 16, bold, 24);
  for (let i = 0; i < 3; i++) line(knownSentence(pageNo, 20 + i));
  return {
    bytes: await doc.save(),
    rowPages,
    tableSection: '2 Measurements > 2.1 Rainfall by station',
    closingSection: '3 Discussion',
  };
}
