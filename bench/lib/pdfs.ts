import { PDFDocument, StandardFonts } from 'pdf-lib';
import { knownSentence } from '../../test/helpers/make-pdf.ts';

// Text PDFs for the benchmarks, from the tests' known sentences (test/helpers/make-pdf.ts), with
// page numbers that continue across files, so several files of one chat never repeat each other.

/** `pages` pages numbered from `firstPage`, each with `linesPerPage` known sentences. */
export async function makeNumberedPdf(pages: number, firstPage: number, linesPerPage = 40): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const lineHeight = Math.min(18, 720 / linesPerPage);
  for (let n = 0; n < pages; n++) {
    const page = doc.addPage([612, 792]);
    let y = 750;
    for (let i = 0; i < linesPerPage; i++) {
      page.drawText(knownSentence(firstPage + n, i), { x: 40, y, size: 10, font });
      y -= lineHeight;
    }
  }
  return doc.save();
}
