import {
  detectCfb,
  detectOoxml,
  docxReader,
  type OoxmlFormat,
  type OpenedDocument,
  openOoxml,
  pptxReader,
  readDocx,
  readPptx,
  readXlsx,
  xlsxReader,
} from './ooxml/index.ts';
import {
  decodeDocument,
  detectMarkup,
  htmlParts,
  htmlReader,
  type MarkupFormat,
  markdownParts,
  markdownReader,
  markupOfDecoded,
  readPlainText,
  textReader,
} from './markup/index.ts';
import {
  ReadRefused,
  type DocumentFormat,
  type DocumentPart,
  type DocumentReader,
  type ReaderLimits,
} from './reader.ts';
import { READ_FORMATS, sniffHead } from './sniff.ts';

// The readers and how a document's format is told from its bytes: the head (sniff.ts), then for a
// package its `[Content_Types].xml` main part, for an OLE compound file what it holds (always
// refused: legacy binary Office or an encrypted package), for text its markup. Adding a format is
// a reader and a line here (docs/DECISIONS.md "Documents, not only PDFs").

const READERS: Partial<Record<DocumentFormat, DocumentReader>> = {
  docx: docxReader,
  pptx: pptxReader,
  xlsx: xlsxReader,
  html: htmlReader,
  markdown: markdownReader,
  text: textReader,
};

/** The format of a document's bytes; ReadRefused UNSUPPORTED_TYPE saying what they are otherwise. */
export async function detectFormat(bytes: Uint8Array, limits: ReaderLimits): Promise<DocumentFormat> {
  const head = sniffHead(bytes);
  if ('refused' in head)
    throw new ReadRefused(
      'UNSUPPORTED_TYPE',
      `The file is ${head.refused}, not a document this service reads (${READ_FORMATS})`,
    );
  switch (head.kind) {
    case 'pdf':
      return 'pdf';
    case 'cfb':
      throw (
        detectCfb(bytes) ??
        new ReadRefused(
          'UNSUPPORTED_TYPE',
          `The file is a damaged Office compound file, not a document this service reads (${READ_FORMATS})`,
        )
      );
    case 'zip':
      return detectOoxml(bytes, limits) ?? notOffice();
    case 'text':
      return detectMarkup(bytes) ?? 'text';
  }
}

const notOffice = (): never => {
  throw new ReadRefused(
    'UNSUPPORTED_TYPE',
    `The file is a zip archive but not a Word, PowerPoint or Excel document (${READ_FORMATS}); upload the documents it holds one by one`,
  );
};

const OPENED_READERS: Record<OoxmlFormat, (opened: OpenedDocument, limits: ReaderLimits) => DocumentPart[]> = {
  docx: readDocx,
  pptx: readPptx,
  xlsx: readXlsx,
};
const TEXT_READERS: Record<MarkupFormat, (text: string, limits: ReaderLimits) => DocumentPart[]> = {
  html: htmlParts,
  markdown: markdownParts,
  text: readPlainText,
};

/**
 * A document's format and parts (none for a PDF: the pipeline reads it page by page). What
 * detection opens is what the reader reads: a package is opened once, text decoded once.
 */
export async function readDocument(
  bytes: Uint8Array,
  limits: ReaderLimits,
): Promise<{ format: DocumentFormat; parts: DocumentPart[] }> {
  const head = sniffHead(bytes);
  if ('kind' in head && head.kind === 'zip') {
    const opened = openOoxml(bytes, limits) ?? notOffice();
    return { format: opened.format, parts: OPENED_READERS[opened.format](opened, limits) };
  }
  if ('kind' in head && head.kind === 'text') {
    // The checks and refusals of the text readers, which every one of them makes first.
    const text = decodeDocument(bytes, limits);
    const format = markupOfDecoded(bytes, text);
    return { format, parts: TEXT_READERS[format](text, limits) };
  }
  const format = await detectFormat(bytes, limits);
  const reader = READERS[format];
  if (!reader) return { format, parts: [] };
  return { format, parts: await reader.read(bytes, limits) };
}
