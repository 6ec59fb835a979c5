import { estimateTokens } from '../ai/tokens.ts';
import { partKey } from '../files/storage.ts';
import type { Chunk } from '../files/chunk-repository.ts';
import { Chunker } from './chunker.ts';
import { extractTextBounded, type ExtractLimits } from './bounded-extract.ts';
import { PermanentFailure } from '../files/failures.ts';
import type { ExtractMessage, PartFile } from './messages.ts';
import { PartPlanner } from './parts.ts';
import type { PipelineDeps } from './pipeline-deps.ts';
import { completeRun, readyToComplete } from './completion.ts';
import { cleanUpStaleRun, isCurrentRun } from './stale-run.ts';
import { countTextTokens } from './tokens.ts';
import { isoNow } from '../clock.ts';

// pdf-extract: text per page → quality check → token-aware chunks of the usable pages → parts
// (one embedding request each). Parts are written and queued while extraction goes on, so
// embedding overlaps with extraction. Pages without usable text go to pdf-ocr in ranges (when
// OCR is on, up to OCR_MAX_PAGES): then the part count is left for pdf-ocr to record, once the
// recognised text is chunked too; otherwise it is recorded here, and the file completes when
// every part is embedded.

export interface ExtractContext {
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
 * Steps: skip a stale message (cleaning up after a deleted file) → read the PDF → extract page by page in a bounded child process
 * (TOO_COMPLEX past a limit), chunking as pages arrive;
 * each full part: write its file, queue it → record pages, chunks, parts → complete if every
 * part is already embedded; refused because the run ended meanwhile: clean up what was written.
 */
export async function runExtract(deps: PipelineDeps, msg: ExtractMessage, ctx: ExtractContext = {}): Promise<void> {
  const record = await deps.files.get(msg.fileId);
  if (!isCurrentRun(record, msg.runId)) return cleanUpStaleRun(deps, msg.fileId, msg.runId, record);

  const config = deps.config;
  const bytes = await deps.storage.get(msg.key);
  const chunker = new Chunker({
    chunkTokens: config.CHUNK_TOKENS,
    overlapTokens: config.CHUNK_OVERLAP_TOKENS,
    countTokens: countTextTokens,
  });
  const pending: Promise<void>[] = [];
  let chunks = 0;
  const planner = new PartPlanner(
    {
      maxInputs: Math.min(config.EMBEDDING_BATCH_SIZE, config.CHUNKS_PER_PART),
      maxTokens: config.EMBEDDING_BATCH_MAX_TOKENS,
    },
    // The provider splits requests by its own (conservative) estimate: count with it too.
    (chunk) => Math.max(chunk.tokens, estimateTokens(chunk.text)),
    (part, partChunks) => {
      const written = writePart(deps, msg, part, partChunks);
      written.catch(() => undefined); // awaited below; never an unhandled rejection meanwhile
      pending.push(written);
    },
  );
  const add = (list: Chunk[]) => {
    for (const chunk of list) planner.add(chunk);
    chunks += list.length;
  };

  // Progress for GET /message/pdf/{fileId}: the page count once, then pages done at most once a
  // second (a conditional write of the current run; a superseded run's write changes nothing).
  let progressAt = Date.now();
  const progress = (p: { pagesTotal?: number; pagesDone: number }) =>
    deps.files.recordPageProgress(record.id, msg.runId, p, isoNow(deps.clock));
  const unusable: number[] = [];
  let garbled = 0;
  const result = await extractTextBounded(bytes, {
    maxPages: config.PDF_MAX_PAGES,
    limits: extractLimits(config, ctx),
    onDocument: async (pages) => void (await progress({ pagesTotal: pages, pagesDone: 0 })),
    onPage: async (page, text, verdict) => {
      if (verdict.usable) add(chunker.push(page, text));
      else {
        unusable.push(page);
        if (verdict.reason !== 'empty') garbled++;
      }
      if (Date.now() - progressAt < PROGRESS_EVERY_MS) return;
      progressAt = Date.now();
      await progress({ pagesDone: page });
    },
  });
  add(chunker.finish());
  planner.flush();
  // Every write settles before the stage returns or fails: a write still in flight after a
  // failure would land after the clean-up of a redelivery (see stale-run.ts).
  const failed = (await Promise.allSettled(pending)).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;

  const toOcr = config.OCR_ENABLED ? unusable.slice(0, config.OCR_MAX_PAGES) : [];
  const unreadable = unusable.length - toOcr.length + result.failedPages;
  const now = isoNow(deps.clock);
  if (!toOcr.length) {
    if (result.textPages === 0) throw noUsableText(garbled, config.OCR_ENABLED);
    const updated = await deps.files.recordExtraction(
      record.id,
      msg.runId,
      {
        next: 'embed',
        pages: result.pages,
        textPages: result.textPages,
        unreadablePages: unreadable,
        chunks,
        partsTotal: planner.parts,
      },
      now,
    );
    if (!updated) return cleanUpStaleRun(deps, record.id, msg.runId, await deps.files.get(record.id));
    if (readyToComplete(updated, msg.runId)) await completeRun(deps, updated);
    return;
  }

  // OCR: ranges of pages, one message each; the last range to finish records the part count.
  const ranges: number[][] = [];
  for (let i = 0; i < toOcr.length; i += config.OCR_PAGES_PER_MESSAGE)
    ranges.push(toOcr.slice(i, i + config.OCR_PAGES_PER_MESSAGE));
  const updated = await deps.files.recordExtraction(
    record.id,
    msg.runId,
    {
      next: 'ocr',
      pages: result.pages,
      textPages: result.textPages,
      unreadablePages: unreadable,
      garbledPages: garbled,
      chunks,
      extractParts: planner.parts,
      ocrRangesTotal: ranges.length,
      ocrPagesTotal: toOcr.length,
    },
    now,
  );
  // Refused: the file was deleted (or re-ingested) while its text was extracted, and the parts
  // written meanwhile must not stay behind.
  if (!updated) return cleanUpStaleRun(deps, record.id, msg.runId, await deps.files.get(record.id));
  await deps.queues.send(
    'pdf-ocr',
    ranges.map((pages, range) => ({ fileId: msg.fileId, runId: msg.runId, key: msg.key, range, pages })),
  );
}

/** The failure of a document none of whose pages has usable text. */
export function noUsableText(garbledPages: number, ocrEnabled: boolean): PermanentFailure {
  if (garbledPages > 0) {
    return new PermanentFailure(
      'UNREADABLE_TEXT',
      ocrEnabled
        ? `The PDF's text cannot be read: ${garbledPages} page(s) carry text that maps to no characters, and OCR recognised none`
        : `The PDF's text cannot be read: ${garbledPages} page(s) carry text that maps to no characters (OCR is off)`,
    );
  }
  return new PermanentFailure(
    'NO_TEXT_LAYER',
    ocrEnabled
      ? 'The PDF has no text layer and OCR recognised no text in it'
      : 'The PDF has no text layer (a scanned document?) and OCR is off',
  );
}

export async function writePart(
  deps: PipelineDeps,
  msg: Pick<ExtractMessage, 'fileId' | 'runId'>,
  part: number,
  chunks: Chunk[],
): Promise<void> {
  const key = partKey(msg.fileId, msg.runId, part);
  const body: PartFile = { fileId: msg.fileId, runId: msg.runId, part, chunks };
  await deps.storage.put(key, JSON.stringify(body), 'application/json');
  await deps.queues.send('pdf-embed', [{ fileId: msg.fileId, runId: msg.runId, part, key }]);
}
