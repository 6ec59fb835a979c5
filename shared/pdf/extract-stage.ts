import { extractTextBounded, type ExtractLimits } from './bounded-extract.ts';
import type { ExtractMessage } from './messages.ts';
import type { PipelineDeps } from './pipeline-deps.ts';
import { orStale, runStage } from './current-run.ts';
import { partWriter } from './part-writer.ts';
import { reuseExtraction } from './extraction-reuse.ts';
import { localPdf } from './local-pdf.ts';
import { noUsableText } from './text-quality.ts';
import { isoNow } from '../clock.ts';

// pdf-extract: text per page → quality check → token-aware chunks of the usable pages → parts
// (one embedding request each). Parts are written and queued while extraction goes on, so
// embedding overlaps with extraction. Pages without usable text go to pdf-ocr in ranges (when
// OCR is on, up to OCR_MAX_PAGES): then the part count is left for pdf-ocr to record, once the
// recognised text is chunked too; otherwise it is recorded here, and the file completes when
// every part is embedded.

interface ExtractContext {
  /** Milliseconds left before the function times out. */
  remainingMs?: () => number;
  /** The function's memory (MB). */
  memoryMb?: number;
}

/** Time kept in reserve to record a failure before the function is stopped. */
const RESERVE_MS = 15_000;
/** Used when the function's memory is not known (outside Lambda and the local runtime). */
const DEFAULT_MEMORY_MB = 1536;
/** How often extraction progress (pages done) is written to the file record at most. */
const PROGRESS_EVERY_MS = 1_000;

/**
 * What one document may cost: the child's heap and resident size below the function's memory
 * (the function itself keeps the rest), and its time within what is left of the invocation.
 */
export function extractLimits(c: PipelineDeps['config'], ctx: ExtractContext = {}): ExtractLimits {
  const memoryMb = ctx.memoryMb && ctx.memoryMb > 0 ? ctx.memoryMb : DEFAULT_MEMORY_MB;
  const remaining = ctx.remainingMs?.();
  const documentMs =
    remaining === undefined
      ? c.PDF_EXTRACT_DOCUMENT_MS
      : Math.max(1000, Math.min(c.PDF_EXTRACT_DOCUMENT_MS, remaining - RESERVE_MS));
  return {
    heapMb: c.PDF_EXTRACT_HEAP_MB ?? Math.floor(memoryMb * 0.5),
    rssMb: c.PDF_EXTRACT_RSS_MB ?? Math.floor(memoryMb * 0.7),
    pageMs: c.PDF_EXTRACT_PAGE_MS,
    documentMs,
    content: {
      maxStreamBytes: c.PDF_MAX_STREAM_BYTES,
      maxContentBytes: c.PDF_MAX_CONTENT_BYTES,
      maxCmapCodes: c.PDF_MAX_CMAP_CODES,
    },
  };
}

/**
 * Steps: an earlier file of the same bytes and chunker gives its chunks (extraction-reuse.ts) →
 * or read the PDF → extract page by page in a bounded child process (TOO_COMPLEX past a
 * limit), chunking as pages arrive; each full part: write its file, queue it → record pages,
 * chunks, parts (the runner completes the file if every part is already embedded), or queue the
 * pages without usable text to pdf-ocr.
 */
export const runExtract = runStage(async (deps, msg: ExtractMessage, record, ctx: ExtractContext) => {
  const reused = await reuseExtraction(deps, msg, record);
  if (reused !== 'none') return orStale(reused.record);
  const config = deps.config;
  // The PDF as a temporary file the child reads in ranges (docs/DECISIONS.md, Large PDFs).
  const pdf = await localPdf(deps.storage, msg.key);
  const parts = partWriter(deps, msg);

  // Progress for GET /message/pdf/{fileId}: the page count once, then pages done at most once a
  // second (a conditional write of the current run; a superseded run's write changes nothing).
  let progressAt = Date.now();
  const progress = (p: { pagesTotal?: number; pagesDone: number }) =>
    deps.files.recordPageProgress(record.id, msg.runId, p, isoNow(deps.clock));
  const unusable: number[] = [];
  let garbled = 0;
  const result = await extractTextBounded(pdf.path, {
    maxPages: config.PDF_MAX_PAGES,
    limits: extractLimits(config, ctx),
    onDocument: async (pages) => void (await progress({ pagesTotal: pages, pagesDone: 0 })),
    onPage: async (page, text, verdict, layout, blocks) => {
      if (verdict.usable) parts.page(page, text, layout, blocks);
      else {
        unusable.push(page);
        if (verdict.reason !== 'empty') garbled++;
      }
      if (Date.now() - progressAt < PROGRESS_EVERY_MS) return;
      progressAt = Date.now();
      await progress({ pagesDone: page });
    },
  }).finally(pdf.remove);
  const { chunks, parts: partsWritten } = await parts.finish();

  const toOcr = config.OCR_ENABLED ? unusable.slice(0, config.OCR_MAX_PAGES) : [];
  const unreadable = unusable.length - toOcr.length + result.failedPages;
  const read = { pages: result.pages, textPages: result.textPages, unreadablePages: unreadable, chunks };
  const now = isoNow(deps.clock);
  if (!toOcr.length) {
    if (result.textPages === 0) throw noUsableText(garbled, config.OCR_ENABLED);
    return orStale(
      await deps.files.recordExtraction(
        record.id,
        msg.runId,
        { next: 'embed', ...read, partsTotal: partsWritten },
        now,
      ),
    );
  }

  // OCR: ranges of pages, one message each; the last range to finish records the part count.
  const ranges: number[][] = [];
  for (let i = 0; i < toOcr.length; i += config.OCR_PAGES_PER_MESSAGE)
    ranges.push(toOcr.slice(i, i + config.OCR_PAGES_PER_MESSAGE));
  orStale(
    await deps.files.recordExtraction(
      record.id,
      msg.runId,
      {
        next: 'ocr',
        ...read,
        garbledPages: garbled,
        extractParts: partsWritten,
        ocrRangesTotal: ranges.length,
        ocrPagesTotal: toOcr.length,
      },
      now,
    ),
  );
  await deps.queues.send(
    'pdf-ocr',
    ranges.map((pages, range) => ({ fileId: msg.fileId, runId: msg.runId, key: msg.key, range, pages })),
  );
});
