import '../config/pdf.ts';
import { logger } from '../observability/logger.ts';
import { everyRangeCounted } from '../files/file-runs.ts';
import type { ProcessingFile } from '../files/file-record.ts';
import { ocrResultKey, pageImageKey, pageTextKey } from '../files/storage.ts';
import { RetryableFailure } from '../files/failures.ts';
import { ocrResultSchema, type OcrMessage, type OcrResult } from './queue-messages.ts';
import type { OcrEngine } from '../pdf/ocr/engine.ts';
import type { RenderLimits } from '../pdf/ocr/bounded-render.ts';
import { ocrPages } from '../pdf/ocr/ocr-pages.ts';
import { localCopy } from './local-copy.ts';
import type { PipelineDeps } from './pipeline-deps.ts';
import { runStage } from './run-stage.ts';
import { partWriter } from './part-writer.ts';
import { noUsableText } from '../pdf/text-quality.ts';
import { isoNow } from '../clock.ts';

// pdf-ocr: one range of pages without usable text → drawn in a bounded child and recognised
// (worker threads; pages that draw nothing are not recognised) →
// the recognised text stored as the range's result → the range counted once (a set on the file
// record, like embedded parts). The invocation that counts the last range finishes OCR: it
// chunks every range's text in page order — chunks and parts numbered after pdf-extract's —
// queues the parts to pdf-embed and records the totals, so completion works as without OCR.

interface OcrContext {
  /** Runs the work with the engine of this cold start (created on first use). */
  withEngine: <T>(work: (engine: OcrEngine) => Promise<T>) => Promise<T>;
  /** Milliseconds left before the function times out. */
  remainingMs?: () => number;
  /** The function's memory (MB). */
  memoryMb?: number;
}

/** The drawing child's share of the function's memory; the rest is this process's and tesseract's (measured in DECISIONS). */
const OCR_CHILD_RSS_SHARE = 0.7;
/** Time kept in reserve to record a failure before the function is stopped. */
const RESERVE_MS = 30_000;
/**
 * A page holding an image this large (a book's cover, a poster; twice a 300 dpi scan of a letter
 * page) is also kept as the page route's image while it is drawn for OCR: drawing it again on a
 * reader's request would decode the image again, seconds of it (docs/DECISIONS.md, Bounds where
 * the cost is).
 */
export const KEEP_DRAWN_IMAGE_PIXELS = 16_000_000;
/** Used when the function's memory is not known (outside Lambda and the local runtime). */
const DEFAULT_MEMORY_MB = 3008;
/** Longest one range may take to draw when the invocation's time left is not known. */
const DEFAULT_RANGE_MS = 540_000;

/**
 * What drawing one range may cost (docs/DECISIONS.md, OCR bounds; Bounds where the cost is): the
 * child's heap and resident size a share of the function's memory (this process and tesseract's
 * worker threads need the rest; image data lives outside the heap), its time per page from the
 * config and for the range within what is left of the invocation. The resident size decides the
 * largest image a page may hold.
 */
export function ocrRenderLimits(
  c: PipelineDeps['config'],
  ctx: Pick<OcrContext, 'remainingMs' | 'memoryMb'> = {},
): RenderLimits {
  const memoryMb = ctx.memoryMb && ctx.memoryMb > 0 ? ctx.memoryMb : DEFAULT_MEMORY_MB;
  const remaining = ctx.remainingMs?.();
  return {
    heapMb: Math.floor(memoryMb * 0.3),
    rssMb: Math.floor(memoryMb * OCR_CHILD_RSS_SHARE),
    pageMs: c.OCR_PAGE_MS,
    documentMs: remaining === undefined ? DEFAULT_RANGE_MS : Math.max(1000, remaining - RESERVE_MS),
    maxImagePixels: c.OCR_MAX_IMAGE_PIXELS,
  };
}

/**
 * Steps: a range already counted only re-checks the finish → read the PDF → draw and recognise
 * the pages → write the range's result → count the range (once) → finish OCR when it was the last.
 */
export const runOcr = runStage(async (deps, msg: OcrMessage, record, ctx: OcrContext) => {
  if (record.doneOcrRanges?.has(msg.range))
    return everyRangeCounted(record, msg.runId, 'ocr') ? finishOcr(deps, record) : undefined;

  // The PDF as a temporary file the child reads in ranges (docs/DECISIONS.md, Large PDFs).
  const pdf = await localCopy(deps.storage, msg.key);
  const started = Date.now();
  const pages = await ctx
    .withEngine((engine) =>
      ocrPages(pdf.path, msg.pages, engine, {
        dpi: deps.config.OCR_DPI,
        limits: ocrRenderLimits(deps.config, ctx),
        keep: {
          dpi: deps.config.PAGE_IMAGE_DPI,
          minImagePixels: KEEP_DRAWN_IMAGE_PIXELS,
          // The image, and the page's size for a page whose OCR finds no text (its block lists only pages with text).
          put: async ({ page, png, widthPt, heightPt }) => {
            const { fileId, runId } = msg;
            const size = { page, width: widthPt, height: heightPt, text: '' };
            await Promise.all([
              deps.storage.put(pageImageKey(fileId, runId, page), png, 'image/png'),
              deps.storage.put(pageTextKey(fileId, runId, page), JSON.stringify(size), 'application/json'),
            ]);
          },
        },
        shouldStop: () =>
          ctx.remainingMs && ctx.remainingMs() < RESERVE_MS
            ? new RetryableFailure('PROCESSING_FAILED', 'Recognising the text took too long')
            : undefined,
      }),
    )
    .finally(pdf.remove);
  logger.info('pages recognised', {
    fileId: msg.fileId,
    range: msg.range,
    pages: pages.length,
    recognised: pages.filter((p) => p.recognised).length,
    usable: pages.filter((p) => p.text).length,
    ms: Date.now() - started,
  });
  const result: OcrResult = {
    range: msg.range,
    pages: pages.map((p) => ({
      page: p.page,
      text: p.text,
      ...(!p.verdict.usable && { unusable: p.verdict.reason }),
      layout: p.layout,
    })),
  };
  await deps.storage.put(ocrResultKey(msg.fileId, msg.runId, msg.range), JSON.stringify(result), 'application/json');

  // Refused: counted before, or the run ended meanwhile (then the runner cleans up).
  const updated =
    (await deps.files.markRangeDone(
      msg.fileId,
      msg.runId,
      { stage: 'ocr', range: msg.range, pages: msg.pages.length },
      isoNow(deps.clock),
    )) ?? (await deps.files.get(msg.fileId));
  return everyRangeCounted(updated, msg.runId, 'ocr') ? finishOcr(deps, updated) : updated;
});

/**
 * Steps: read every range's result → fail typed when no page of the document has usable text →
 * chunk the recognised pages (numbered after pdf-extract's chunks and parts) → write and queue
 * the parts → record pages read by OCR, unreadable pages, chunks and the part count (the runner
 * completes the file when every part is already embedded). Deterministic, so running it twice (a redelivery) writes
 * the same parts and the embed stage counts each once.
 */
async function finishOcr(deps: PipelineDeps, record: ProcessingFile): Promise<ProcessingFile | undefined> {
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
    throw noUsableText(
      (record.garbledPages ?? 0) + garbledAfterOcr,
      true,
      pages.filter((p) => p.unusable === 'undrawable').length,
    );

  const firstChunk = record.extractChunks ?? 0;
  const firstPart = record.extractParts ?? 0;
  const parts = partWriter(
    deps,
    { fileId: record.id, runId },
    {
      firstChunk,
      firstPart,
      recognised: true,
    },
  );
  for (const p of recognised) parts.page(p.page, p.text, p.layout);
  const written = await parts.finish();

  return deps.files.recordOcr(
    record.id,
    runId,
    {
      ocrPages: recognised.length,
      // Pages OCR found blank are not unreadable (there is nothing to read); garbled ones are.
      unreadablePages: (record.unreadablePages ?? 0) + garbledAfterOcr,
      chunks: firstChunk + written.chunks,
      partsTotal: firstPart + written.parts,
    },
    isoNow(deps.clock),
  );
}
