import { fixturePdf, makeTablePdf } from '../../test/helpers/make-pdf.ts';
import { makePassagesPdf, makeScannedPdf, SCANNED_PAGES } from '../../test/helpers/make-script-pdfs.ts';

// The documents `npm run eval` asks about: real-world fixtures (test/fixtures/pdfs), a report
// with a table (made-up stations, so no model knows its cells) and a scan with no text layer. Each names
// the PDF uploaded and the PDF whose text items place its glyphs for the box ground truth: the
// document itself, or, for the scan, the text PDF it was drawn from (same page size, same places).

export interface EvalDocument {
  fileName: string;
  pdf: () => Promise<Uint8Array>;
  layout: () => Promise<Uint8Array>;
}

const fixture = (fileName: string): EvalDocument => {
  const pdf = async () => new Uint8Array(await fixturePdf(fileName));
  return { fileName, pdf, layout: pdf };
};

/** The table fixture (test/helpers/make-pdf.ts): 60 rows of made-up stations, over two pages, the header repeated. */
export const TABLE_ROWS = 60;
export const TABLE = await makeTablePdf(TABLE_ROWS);

export const EVAL_DOCUMENTS: EvalDocument[] = [
  fixture('tracemonkey.pdf'),
  fixture('hello-world.pdf'),
  { fileName: 'rainfall-report.pdf', pdf: async () => TABLE.bytes, layout: async () => TABLE.bytes },
  {
    fileName: 'westmere-scan.pdf',
    pdf: () => makeScannedPdf(SCANNED_PAGES),
    layout: () => makePassagesPdf(SCANNED_PAGES),
  },
];
