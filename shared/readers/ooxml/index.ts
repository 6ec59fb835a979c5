// The Office Open XML readers (Word, PowerPoint, Excel) and the detection of Office files from
// their bytes (docs/DECISIONS.md "OOXML readers").

export { detectCfb, detectOoxml, type OoxmlFormat } from './detect.ts';
export { docxReader } from './docx.ts';
export { pptxReader } from './pptx.ts';
export { xlsxReader } from './xlsx.ts';
