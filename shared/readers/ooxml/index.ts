// The Office Open XML readers (Word, PowerPoint, Excel) and the detection of Office files from
// their bytes (docs/DECISIONS.md "OOXML readers").

export { detectCfb, detectOoxml, type OoxmlFormat, type OpenedDocument, openOoxml } from './detect.ts';
export { docxReader, readDocx } from './docx.ts';
export { pptxReader, readPptx } from './pptx.ts';
export { readXlsx, xlsxReader } from './xlsx.ts';
