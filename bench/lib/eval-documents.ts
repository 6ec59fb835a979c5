import { fixturePdf, makeTablePdf } from '../../test/helpers/make-pdf.ts';
import {
  makeArabicPdf,
  makeGlyphIdPdf,
  makeJapanesePdf,
  makePassagesPdf,
  makeScannedPdf,
  SCANNED_PAGES,
} from '../../test/helpers/make-script-pdfs.ts';

// The documents `npm run eval` asks about: real-world fixtures (test/fixtures/pdfs), a report
// with a table (made-up stations, so no model knows its cells) and a scan with no text layer. Each names
// the PDF uploaded and the PDF whose text items place its glyphs for the box ground truth: the
// document itself, or, for the scan, the text PDF it was drawn from (same page size, same places).

export interface EvalDocument {
  fileName: string;
  pdf: () => Promise<Uint8Array>;
  /** The PDF whose text items are the box ground truth; absent: boxes not checked for this document. */
  layout?: () => Promise<Uint8Array>;
  /** What kind of document it is (reported with the figures). */
  kind: string;
}

const fixture = (fileName: string, kind: string): EvalDocument => {
  const pdf = async () => new Uint8Array(await fixturePdf(fileName));
  return { fileName, pdf, layout: pdf, kind };
};

/** The table fixture (test/helpers/make-pdf.ts): 60 rows of made-up stations, over two pages, the header repeated. */
export const TABLE_ROWS = 60;
export const TABLE = await makeTablePdf(TABLE_ROWS);

export const EVAL_DOCUMENTS: EvalDocument[] = [
  fixture('tracemonkey.pdf', 'research paper, two columns'),
  fixture('hello-world.pdf', 'one line, ASCIIHex stream'),
  {
    fileName: 'rainfall-report.pdf',
    pdf: async () => TABLE.bytes,
    layout: async () => TABLE.bytes,
    kind: 'report with a two-page table',
  },
  {
    fileName: 'westmere-scan.pdf',
    pdf: () => makeScannedPdf(SCANNED_PAGES),
    layout: () => makePassagesPdf(SCANNED_PAGES),
    kind: 'scan, no text layer (OCR)',
  },
  { fileName: 'kansai-notes-ja.pdf', pdf: async () => makeJapanesePdf(), kind: 'Japanese, CID font' },
  { fileName: 'arabic-facts.pdf', pdf: async () => makeArabicPdf(), kind: 'Arabic, right to left' },
  { fileName: 'orchard-glyph-ids.pdf', pdf: () => makeGlyphIdPdf(), kind: 'glyph ids without Unicode (OCR)' },
];
