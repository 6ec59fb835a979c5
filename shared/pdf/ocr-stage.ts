import { estimateTokens } from '../ai/tokens.ts';
import { logger } from '../logger.ts';
import type { PipelineRecord, ProcessingFile } from '../files/file-repository.ts';
import { ocrResultKey } from '../files/storage.ts';
import type { Chunk } from '../files/chunk-repository.ts';
import { Chunker } from './chunker.ts';
import { completeRun, readyToComplete } from './completion.ts';
import { noUsableText, writePart } from './extract-stage.ts';
import { RetryableFailure } from '../files/failures.ts';
import { ocrResultSchema, type OcrMessage, type OcrResult } from './messages.ts';
import type { OcrEngine } from './ocr/engine.ts';
import { ocrPages } from './ocr/ocr-pages.ts';
import { PartPlanner } from './parts.ts';
import type { PipelineDeps } from './pipeline-deps.ts';
import { countTextTokens } from './tokens.ts';
import { cleanUpStaleRun, isCurrentRun } from './stale-run.ts';
import { isoNow } from '../clock.ts';

// pdf-ocr: one range of pages without usable text → drawn and recognised (worker threads) →
// the recognised text stored as the range's result → the range counted once (a set on the file
// record, like embedded parts). The invocation that counts the last range finishes OCR: it
// chunks every range's text in page order — chunks and parts numbered after pdf-extract's —
// queues the parts to pdf-embed and records the totals, so completion works as without OCR.

export interface OcrContext {
  /** Runs the work with the engine of this cold start (created on first use). */
  withEngine: <T>(work: (engine: OcrEngine) => Promise<T>) => Promise<T>;
  /** Milliseconds left before the function times out. */
  remainingMs?: () => number;
}

/** Time kept in reserve to record a failure before the function is stopped. */
const RESERVE_MS = 30_000;

type RawRecord = ProcessingFile & { doneOcrRanges?: Set<number> };

/** True when every OCR range of the run is recognised and the text is not yet chunked. */
const readyToFinish = (r: PipelineRecord | undefined, runId: string): r is RawRecord =>
  !!r &&
  r.status === 'processing' &&
  r.runId === runId &&
  r.stage === 'ocr' &&
  r.ocrRangesTotal !== undefined &&
  (r.ocrRangesDone ?? 0) >= r.ocrRangesTotal;

/**
 * Steps: skip a stale message → a range already counted only re-checks the finish → read the
 * PDF → draw and recognise the pages → write the range's result → count the range (once) →
 * finish OCR when it was the last.
 */
export async function runOcr(deps: PipelineDeps, msg: OcrMessage, ctx: OcrContext): Promise<void> {
  const record = await deps.files.getRaw(msg.fileId);
  if (!isCurrentRun(record, msg.runId)) return cleanUpStaleRun(deps, msg.fileId, msg.runId, record);
  if (record.doneOcrRanges?.has(msg.range)) {
    if (readyToFinish(record, msg.runId)) await finishOcr(deps, record);
    return;
  }

  const bytes = await deps.storage.get(msg.key);
  const started = Date.now();
  const pages = await ctx.withEngine((engine) =>
    ocrPages(bytes, msg.pages, engine, {
      dpi: deps.config.OCR_DPI,
      shouldStop: () =>
        ctx.remainingMs && ctx.remainingMs() < RESERVE_MS
          ? new RetryableFailure('PROCESSING_FAILED', 'Recognising the text took too long')
          : undefined,
    }),
  );
  logger.info('pages recognised', {
    fileId: msg.fileId,
    range: msg.range,
    pages: pages.length,
    usable: pages.filter((p) => p.text).length,
    ms: Date.now() - started,
  });
  const result: OcrResult = {
    range: msg.range,
    pages: pages.map((p) => ({ page: p.page, text: p.text, ...(!p.verdict.usable && { unusable: p.verdict.reason }) })),
  };
  await deps.storage.put(ocrResultKey(msg.fileId, msg.runId, msg.range), JSON.stringify(result), 'application/json');

  const updated =
    (await deps.files.markOcrRangeDone(
      msg.fileId,
      msg.runId,
      { range: msg.range, pages: msg.pages.length },
      isoNow(deps.clock),
    )) ?? (await deps.files.getRaw(msg.fileId));
  // The file was deleted (or re-ingested) while its pages were recognised: nothing may stay.
  if (!isCurrentRun(updated, msg.runId)) return cleanUpStaleRun(deps, msg.fileId, msg.runId, updated);
  if (readyToFinish(updated, msg.runId)) await finishOcr(deps, updated);
}

/**
 * Steps: read every range's result → fail typed when no page of the document has usable text →
 * chunk the recognised pages (numbered after pdf-extract's chunks and parts) → write and queue
 * the parts → record pages read by OCR, unreadable pages, chunks and the part count → complete
 * when every part is already embedded. Deterministic, so running it twice (a redelivery) writes
 * the same parts and the embed stage counts each once.
 */
export async function finishOcr(deps: PipelineDeps, record: RawRecord): Promise<void> {
  const { runId } = record;
  const results = await Promise.all(
    Array.from({ length: record.ocrRangesTotal ?? 0 }, async (_, r) =>
      ocrResultSchema.parse(
        JSON.parse(Buffer.from(await deps.storage.get(ocrResultKey(record.id, runId, r))).toString('utf8')),
      ),
    ),
  );
  const pages = results.flatMap((r) => r.pages).sort((a, b) => a.page - b.page);
  const recognised = pages.filter((p) => p.text);
  const garbledAfterOcr = pages.filter((p) => !p.text && p.unusable && p.unusable !== 'empty').length;
  if ((record.textPages ?? 0) + recognised.length === 0)
    throw noUsableText((record.garbledPages ?? 0) + garbledAfterOcr, true);

  const config = deps.config;
  const firstChunk = record.extractChunks ?? 0;
  const chunker = new Chunker({
    chunkTokens: config.CHUNK_TOKENS,
    overlapTokens: config.CHUNK_OVERLAP_TOKENS,
    countTokens: countTextTokens,
    firstIndex: firstChunk,
  });
  const pending: Promise<void>[] = [];
  const planner = new PartPlanner(
    {
      maxInputs: Math.min(config.EMBEDDING_BATCH_SIZE, config.CHUNKS_PER_PART),
      maxTokens: config.EMBEDDING_BATCH_MAX_TOKENS,
    },
    (chunk) => Math.max(chunk.tokens, estimateTokens(chunk.text)),
    (part, partChunks) => {
      const written = writePart(deps, { fileId: record.id, runId }, part, partChunks);
      written.catch(() => undefined); // awaited below
      pending.push(written);
    },
    record.extractParts ?? 0,
  );
  let chunks = 0;
  const add = (list: Chunk[]) => {
    for (const chunk of list)
      planner.add({ ...chunk, ocrPages: [...new Set(chunk.pageStarts.map(([, page]) => page))] });
    chunks += list.length;
  };
  for (const p of recognised) add(chunker.push(p.page, p.text));
  add(chunker.finish());
  planner.flush();
  await Promise.all(pending);

  const now = isoNow(deps.clock);
  const updated = await deps.files.recordOcr(
    record.id,
    runId,
    {
      ocrPages: recognised.length,
      // Pages OCR found blank are not unreadable (there is nothing to read); garbled ones are.
      unreadablePages: (record.unreadablePages ?? 0) + garbledAfterOcr,
      chunks: firstChunk + chunks,
      partsTotal: (record.extractParts ?? 0) + planner.parts,
    },
    now,
  );
  if (readyToComplete(updated, runId)) await completeRun(deps, updated);
}
