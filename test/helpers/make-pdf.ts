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
