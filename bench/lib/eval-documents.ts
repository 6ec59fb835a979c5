import { PDFDocument, rgb, StandardFonts } from 'pdf-lib';
import { fixturePdf } from '../../test/helpers/make-pdf.ts';
import { makePassagesPdf, makeScannedPdf, SCANNED_PAGES } from '../../test/helpers/make-script-pdfs.ts';

// The documents `npm run eval` asks about: real-world fixtures (test/fixtures/pdfs), a table
// (a made-up registry, so no model knows its cells) and a scan with no text layer. Each names
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

/** The registry's columns, then one row per vessel (values made up). */
export const REGISTRY_HEADER = ['Vessel', 'Home port', 'Length (m)', 'Crew', 'Built', 'Cargo'];
export const REGISTRY_ROWS = [
  ['Marigold', 'Harrowby', '42', '9', '1987', 'timber'],
  ['Osprey Dawn', 'Caldbeck', '57', '14', '1992', 'grain'],
  ['Tern of Ardal', 'Harrowby', '31', '6', '2004', 'salt fish'],
  ['Heron Star', 'Brennock', '66', '18', '1979', 'coal'],
  ['Quiet Wren', 'Caldbeck', '24', '4', '2011', 'mail'],
  ['Saltmarsh Lady', 'Penhallow', '48', '11', '1999', 'wool'],
  ['Grey Fulmar', 'Brennock', '39', '8', '2008', 'slate'],
  ['Amberlight', 'Penhallow', '53', '13', '1985', 'copper ore'],
  ['Kittiwake II', 'Harrowby', '28', '5', '2016', 'passengers'],
  ['Northern Lantern', 'Caldbeck', '71', '21', '1974', 'oil drums'],
  ['Bramble Rose', 'Brennock', '35', '7', '2001', 'apples'],
  ['Cormorant Bay', 'Penhallow', '60', '16', '1990', 'cement'],
];
const ROWS_ON_FIRST_PAGE = 6;

/**
 * A ruled table over two pages, as reports print them: page 1 a paragraph and the first rows
 * under the header, page 2 the header again and the remaining rows, then a closing paragraph.
 */
export async function makeRegistryPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const columns = [56, 170, 270, 350, 400, 460];
  const right = 556;
  const drawTable = (page: ReturnType<typeof doc.addPage>, top: number, rows: string[][]) => {
    let y = top;
    const rule = (at: number) =>
      page.drawLine({
        start: { x: columns[0]! - 4, y: at },
        end: { x: right, y: at },
        thickness: 0.6,
        color: rgb(0, 0, 0),
      });
    rule(y + 14);
    REGISTRY_HEADER.forEach((h, i) => page.drawText(h, { x: columns[i]!, y, size: 10, font: bold }));
    rule(y - 5);
    for (const row of rows) {
      y -= 20;
      row.forEach((cell, i) => page.drawText(cell, { x: columns[i]!, y, size: 10, font }));
      rule(y - 5);
    }
    return y;
  };
  const paragraph = (page: ReturnType<typeof doc.addPage>, y: number, lines: string[]) => {
    for (const line of lines) {
      page.drawText(line, { x: 56, y, size: 11, font });
      y -= 16;
    }
    return y;
  };
  const first = doc.addPage([612, 792]);
  first.drawText('Coastal Fleet Registry', { x: 56, y: 730, size: 18, font: bold });
  paragraph(first, 700, [
    'This registry lists the working vessels of the four harbours of the northern coast.',
    'Each row gives the home port, the length over all, the crew, the year built and the usual cargo.',
  ]);
  drawTable(first, 640, REGISTRY_ROWS.slice(0, ROWS_ON_FIRST_PAGE));
  const second = doc.addPage([612, 792]);
  const end = drawTable(second, 730, REGISTRY_ROWS.slice(ROWS_ON_FIRST_PAGE));
  paragraph(second, end - 40, [
    'Vessels older than forty years are inspected every spring by the harbour master of their home port.',
  ]);
  return doc.save();
}

export const EVAL_DOCUMENTS: EvalDocument[] = [
  fixture('tracemonkey.pdf'),
  fixture('hello-world.pdf'),
  { fileName: 'fleet-registry.pdf', pdf: makeRegistryPdf, layout: makeRegistryPdf },
  {
    fileName: 'westmere-scan.pdf',
    pdf: () => makeScannedPdf(SCANNED_PAGES),
    layout: () => makePassagesPdf(SCANNED_PAGES),
  },
];
