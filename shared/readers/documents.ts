import { detectCfb, detectOoxml, docxReader, pptxReader, xlsxReader } from './ooxml/index.ts';
import { detectMarkup, htmlReader, markdownReader, textReader } from './markup/index.ts';
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
    case 'zip': {
      const format = detectOoxml(bytes, limits);
      if (format) return format;
      throw new ReadRefused(
        'UNSUPPORTED_TYPE',
        `The file is a zip archive but not a Word, PowerPoint or Excel document (${READ_FORMATS}); upload the documents it holds one by one`,
      );
    }
    case 'text':
      return detectMarkup(bytes) ?? 'text';
  }
}

/** A document's format and parts (none for a PDF: the pipeline reads it page by page). */
export async function readDocument(
  bytes: Uint8Array,
  limits: ReaderLimits,
): Promise<{ format: DocumentFormat; parts: DocumentPart[] }> {
  const format = await detectFormat(bytes, limits);
  const reader = READERS[format];
  if (!reader) return { format, parts: [] };
  return { format, parts: await reader.read(bytes, limits) };
}
