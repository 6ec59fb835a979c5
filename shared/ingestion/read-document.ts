import '../config/pdf.ts';
import { PermanentFailure } from '../files/failures.ts';
import type { FileRecord, ProcessingFile } from '../files/file-record.ts';
import { readDocumentBounded, type ReadOutcome } from '../pdf/bounded-read.ts';
import { DEFAULT_READER_LIMITS, type ReaderLimits } from '../readers/reader.ts';
import { isoNow } from '../clock.ts';
import { localCopy } from './local-copy.ts';
import type { ExtractMessage } from './queue-messages.ts';
import type { PipelineDeps } from './pipeline-deps.ts';
import { orStale } from './run-stage.ts';
import { partWriter } from './part-writer.ts';
import type { ChildLimits } from '../pdf/bounded-child.ts';

// pdf-extract for a document that is not a PDF (or not yet known to be one: the fetch stage
// records a PDF's format from its head): its format detected from the bytes and its parts read
// in the bounded child (docs/DECISIONS.md "Documents, not only PDFs"), then each part chunked
// like a page, with its place, and the run goes on to embedding as a PDF's does. A PDF found
// here is handed back to the page-by-page reader.

export function readerLimits(c: PipelineDeps['config']): ReaderLimits {
  return {
    maxEntries: c.DOCUMENT_MAX_ENTRIES,
    maxUncompressedBytes: c.DOCUMENT_MAX_UNCOMPRESSED_BYTES,
    maxCompressionRatio: c.DOCUMENT_MAX_RATIO,
    maxDepth: c.DOCUMENT_MAX_DEPTH,
    maxTextChars: DEFAULT_READER_LIMITS.maxTextChars,
    maxCells: c.DOCUMENT_MAX_CELLS,
  };
}

/** The stored document read in the bounded child: its format, and its parts unless it is a PDF. */
export async function readStoredDocument(deps: PipelineDeps, key: string, child: ChildLimits): Promise<ReadOutcome> {
  const copy = await localCopy(deps.storage, key);
  return readDocumentBounded(copy.path, { child, reader: readerLimits(deps.config) }).finally(copy.remove);
}

/**
 * Steps: every part kept (its text and place, for the part route) and chunked (table rows with
 * their header, the heading path) → parts written and queued to embedding → the format, the part
 * count and the chunks recorded. A document whose parts hold no text fails NO_TEXT_LAYER.
 */
export async function writeDocument(
  deps: PipelineDeps,
  msg: ExtractMessage,
  record: FileRecord,
  read: ReadOutcome,
): Promise<ProcessingFile> {
  const writer = partWriter(deps, msg);
  read.parts.forEach((p, k) => {
    writer.part({ part: k + 1, ...p });
  });
  const written = await writer.finish();
  const textParts = read.parts.filter((p) => p.text.trim()).length;
  if (!textParts || !written.chunks)
    throw new PermanentFailure(
      'NO_TEXT_LAYER',
      `The ${read.format} document "${record.fileName}" holds no text to read`,
    );
  return orStale(
    await deps.files.recordExtraction(
      msg.fileId,
      msg.runId,
      {
        next: 'embed',
        format: read.format,
        pages: read.parts.length,
        textPages: textParts,
        unreadablePages: 0,
        chunks: written.chunks,
        partsTotal: written.parts,
      },
      isoNow(deps.clock),
    ),
  );
}
