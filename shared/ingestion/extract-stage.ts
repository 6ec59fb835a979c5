import '../config/pdf.ts';
import { extractTextBounded, type ExtractLimits } from '../pdf/bounded-extract.ts';
import { planRanges, type PageRange } from '../pdf/page-ranges.ts';
import { everyRangeCounted } from '../files/file-runs.ts';
import type { FileRecord, ProcessingFile } from '../files/file-record.ts';
import { PermanentFailure } from '../files/failures.ts';
import { extractRangeKey } from '../files/storage.ts';
import type { PageBlock } from '../pdf/layout/page-layout.ts';
import { extractRangeResultSchema, type ExtractMessage, type ExtractRangeResult } from './queue-messages.ts';
import type { PipelineDeps } from './pipeline-deps.ts';
import type { PageLayout } from '../pdf/positions.ts';
import { orStale, runStage } from './run-stage.ts';
import {
  chunkCollector,
  partCost,
  partLimits,
  partWriter,
  type ChunkCollector,
  type PartWriter,
} from './part-writer.ts';
import { balancedLimits, type PartLimits } from './embed-parts.ts';
import { mapLimit } from '../dynamo.ts';
import { reuseExtraction } from './extraction-reuse.ts';
import { readStoredDocument, writeDocument } from './read-document.ts';
import { localCopy } from './local-copy.ts';
import { noUsableText } from '../pdf/text-quality.ts';
import { isoNow } from '../clock.ts';
import type { EmbedContext } from './embed-stage.ts';
import { inlineEmbedSink } from './inline-embed.ts';

// pdf-extract: text per page → quality check → token-aware chunks of the usable pages → parts
// (one embedding request each). Parts are written and queued while extraction goes on, so
// embedding overlaps with extraction. Pages without usable text go to pdf-ocr in ranges (when
// OCR is on, up to OCR_MAX_PAGES): then the part count is left for pdf-ocr to record, once the
// recognised text is chunked too; otherwise it is recorded here, and the file completes when
// every part is embedded. A long document is read in ranges of pages by several invocations at
// once, like OCR: each keeps its range's chunks, and the last to finish numbers them into parts.

interface ExtractContext {
  /** Milliseconds left before the function times out. */
  remainingMs?: () => number;
  /** The function's memory (MB). */
  memoryMb?: number;
  /** Given: the parts made here are embedded here too (inline-embed.ts); absent: each goes to pdf-embed. */
  embed?: EmbedContext;
}

/** The parts of a run, embedded in this invocation when it can (inline-embed.ts). */
const partsOf = (
  deps: PipelineDeps,
  msg: ExtractMessage,
  record: ProcessingFile,
  ctx: ExtractContext,
  limits?: PartLimits,
) =>
  partWriter(deps, msg, {
    ...(ctx.embed && { sink: inlineEmbedSink(deps, msg, record, ctx.embed, () => ctx.remainingMs?.()) }),
    ...(limits && { limits }),
  });

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

/** What the text layers of the document (or of its ranges, added up) gave. */
interface TextLayers {
  pages: number;
  textPages: number;
  failedPages: number;
  /** Pages without usable text, in page order; `garbled` of them had text that was not usable. */
  unusable: number[];
  garbled: number;
}

/**
 * Steps: an earlier file of the same bytes and chunker gives its chunks (extraction-reuse.ts) →
 * or read the PDF → extract page by page in a bounded child process (TOO_COMPLEX past a
 * limit), chunking as pages arrive; each full part: write its file, queue it → record pages,
 * chunks, parts (the runner completes the file if every part is already embedded), or queue the
 * pages without usable text to pdf-ocr. A document longer than PDF_EXTRACT_PAGES_PER_RANGE is
 * read in ranges (docs/DECISIONS.md "Extraction in ranges of pages"): this message reads the
 * first and sends the others; the range read last gathers them.
 */
export const runExtract = runStage(async (deps, msg: ExtractMessage, record, ctx: ExtractContext) => {
  const rangeIndex = msg.range?.index ?? 0;
  if (record.doneExtractRanges?.has(rangeIndex)) {
    if (everyRangeCounted(record, msg.runId, 'extract')) return gatherRanges(deps, msg, record, ctx);
    // The first message again (a redelivery, or restart recovery): the ranges not yet counted are
    // sent again, in case theirs were lost with a killed instance (a range read twice counts once).
    if (!msg.range) await sendRanges(deps, msg, record);
    return undefined;
  }
  if (msg.range) return extractRange(deps, msg, msg.range, ctx);

  const reused = await reuseExtraction(deps, msg, record);
  if (reused !== 'none') return orStale(reused.record);
  const config = deps.config;
  // Not known to be a PDF: the reader of its format, unless its bytes turn out to be one.
  if (record.format !== 'pdf') {
    const read = await readStoredDocument(deps, msg.key, extractLimits(config, ctx));
    if (read.format !== 'pdf') return writeDocument(deps, msg, record, read);
  }
  const perRange = config.PDF_EXTRACT_PAGES_PER_RANGE;

  // Progress for GET /message/pdf/{fileId}: the page count once, then pages done at most once a
  // second (a conditional write of the current run; a superseded run's write changes nothing).
  // A document read in ranges counts its pages a range at a time instead.
  let progressAt = Date.now();
  const progress = (p: { pagesTotal?: number; pagesDone: number }) =>
    deps.files.recordPageProgress(record.id, msg.runId, p, isoNow(deps.clock));
  let writer: PartWriter | ChunkCollector = partsOf(deps, msg, record, ctx);
  let firstRange: PageRange | undefined;
  const layers = await readTextLayers(
    deps,
    msg.key,
    ctx,
    { firstRangeOf: perRange },
    {
      onDocument: async (pages) => {
        const [first, ...others] = planRanges(pages, perRange);
        if (!others.length) return void (await progress({ pagesTotal: pages, pagesDone: 0 }));
        firstRange = first;
        writer = chunkCollector(deps, msg);
        await sendRanges(
          deps,
          msg,
          orStale(
            await deps.files.recordExtractRanges(
              record.id,
              msg.runId,
              { rangesTotal: others.length + 1, rangePages: perRange, pagesTotal: pages },
              isoNow(deps.clock),
            ),
          ),
        );
      },
      onPage: async (page, text, layout, blocks) => {
        writer.page(page, text, layout, blocks);
        if (firstRange || Date.now() - progressAt < PROGRESS_EVERY_MS) return;
        progressAt = Date.now();
        await progress({ pagesDone: page });
      },
    },
  );
  if (firstRange && !('chunks' in writer)) return finishRange(deps, msg, 0, firstRange, layers, writer, ctx);
  return routeExtraction(deps, msg, layers, await writer.finish());
});

/** Sends a message for each range after the first that the record does not count as read yet. */
async function sendRanges(deps: PipelineDeps, msg: ExtractMessage, record: ProcessingFile): Promise<void> {
  if (!record.pagesTotal || !record.extractRangePages) return;
  const ranges = planRanges(record.pagesTotal, record.extractRangePages)
    .map((range, index) => ({ index, ...range }))
    .filter(({ index }) => index > 0 && !record.doneExtractRanges?.has(index));
  await deps.queues.send(
    'pdf-extract',
    ranges.map((range) => ({ fileId: msg.fileId, runId: msg.runId, key: msg.key, range })),
  );
}

/** The pages of one range (not the first) of a large document: read, kept, counted. */
async function extractRange(
  deps: PipelineDeps,
  msg: ExtractMessage,
  range: PageRange & { index: number },
  ctx: ExtractContext,
): Promise<FileRecord | undefined> {
  const collector = chunkCollector(deps, msg);
  // The first range's reader checked the content of these bytes before it sent this range.
  const layers = await readTextLayers(
    deps,
    msg.key,
    ctx,
    { range, contentChecked: true },
    {
      onPage: (page, text, layout, blocks) => collector.page(page, text, layout, blocks),
    },
  );
  return finishRange(deps, msg, range.index, range, layers, collector, ctx);
}

/**
 * Reads the text layers of the PDF at `key` (or of a range of its pages) in the bounded child:
 * usable pages go to `onPage`, the others are noted for OCR.
 */
async function readTextLayers(
  deps: PipelineDeps,
  key: string,
  ctx: ExtractContext,
  pages: { range?: PageRange; firstRangeOf?: number; contentChecked?: boolean },
  on: {
    onDocument?: (pages: number) => Promise<void>;
    onPage: (page: number, text: string, layout?: PageLayout, blocks?: PageBlock[]) => void | Promise<void>;
  },
): Promise<TextLayers> {
  const { config } = deps;
  const unusable: number[] = [];
  let garbled = 0;
  // The PDF as a temporary file the child reads in ranges (docs/DECISIONS.md, Large PDFs).
  const pdf = await localCopy(deps.storage, key);
  const result = await extractTextBounded(pdf.path, {
    maxPages: config.PDF_MAX_PAGES,
    ...pages,
    limits: extractLimits(config, ctx),
    onDocument: on.onDocument,
    onPage: async (page, text, verdict, layout, blocks) => {
      if (verdict.usable) await on.onPage(page, text, layout, blocks);
      // A page that draws nothing has nothing for OCR to read (nor is it unreadable).
      else if (verdict.reason !== 'blank') {
        unusable.push(page);
        if (verdict.reason !== 'empty') garbled++;
      }
    },
  }).finally(pdf.remove);
  return { pages: result.pages, textPages: result.textPages, failedPages: result.failedPages, unusable, garbled };
}

/** Writes what one range read, counts the range once, and gathers the ranges when it was the last. */
async function finishRange(
  deps: PipelineDeps,
  msg: ExtractMessage,
  index: number,
  range: PageRange,
  layers: TextLayers,
  collector: ChunkCollector,
  ctx: ExtractContext,
): Promise<FileRecord | undefined> {
  const result: ExtractRangeResult = {
    range: index,
    textPages: layers.textPages,
    failedPages: layers.failedPages,
    unusable: layers.unusable,
    garbled: layers.garbled,
    chunks: await collector.finish(),
  };
  await deps.storage.put(extractRangeKey(msg.fileId, msg.runId, index), JSON.stringify(result), 'application/json');
  const pages = Math.min(range.last, layers.pages) - range.first + 1;
  // Refused: counted before, or the run ended meanwhile (then the runner cleans up).
  const updated =
    (await deps.files.markRangeDone(
      msg.fileId,
      msg.runId,
      { stage: 'extract', range: index, pages },
      isoNow(deps.clock),
    )) ?? (await deps.files.get(msg.fileId));
  return everyRangeCounted(updated, msg.runId, 'extract') ? gatherRanges(deps, msg, updated, ctx) : updated;
}

/**
 * Steps: each range's result in page order (one in memory at a time) → its chunks numbered after
 * the ranges before and planned into parts, written and queued → the text layers added up → on as
 * for a document read whole. Deterministic, so a second gathering (a redelivery) writes the same
 * parts and the embed stage counts each once.
 */
async function gatherRanges(
  deps: PipelineDeps,
  msg: ExtractMessage,
  record: ProcessingFile,
  ctx: ExtractContext,
): Promise<ProcessingFile | undefined> {
  const ranges = Array.from({ length: record.extractRangesTotal ?? 0 }, (_, range) => range);
  const read = async (range: number) =>
    extractRangeResultSchema.parse(
      JSON.parse(Buffer.from(await deps.storage.get(extractRangeKey(record.id, record.runId, range))).toString('utf8')),
    );
  // A first pass for the sizes only, so the parts come out of about equal size (balancedLimits).
  const weights: number[][] = [];
  await mapLimit(ranges, 4, async (range) => {
    weights[range] = (await read(range)).chunks.map(partCost);
  });
  const parts = partsOf(deps, msg, record, ctx, balancedLimits(partLimits(deps.config), weights.flat()));
  const layers: TextLayers = { pages: record.pagesTotal ?? 0, textPages: 0, failedPages: 0, unusable: [], garbled: 0 };
  let chunks = 0;
  for (const range of ranges) {
    const result = await read(range);
    parts.chunks(result.chunks.map((chunk) => ({ ...chunk, index: chunks + chunk.index })));
    chunks += result.chunks.length;
    layers.textPages += result.textPages;
    layers.failedPages += result.failedPages;
    layers.unusable.push(...result.unusable);
    layers.garbled += result.garbled;
  }
  if (layers.failedPages === layers.pages)
    throw new PermanentFailure('NOT_PDF', 'The file is damaged: no page could be read');
  return routeExtraction(deps, msg, layers, await parts.finish());
}

/**
 * Where a run goes once its text layers are read and chunked: on to embedding (every page had
 * text, or OCR is off: the part count recorded, the file completes when every part is embedded),
 * or to pdf-ocr in ranges of pages (when OCR is on, up to OCR_MAX_PAGES: the last range records
 * the part count, once the recognised text is chunked too).
 */
async function routeExtraction(
  deps: PipelineDeps,
  msg: ExtractMessage,
  layers: TextLayers,
  written: { chunks: number; parts: number },
): Promise<ProcessingFile> {
  const config = deps.config;
  const toOcr = config.OCR_ENABLED ? layers.unusable.slice(0, config.OCR_MAX_PAGES) : [];
  const unreadable = layers.unusable.length - toOcr.length + layers.failedPages;
  const read = {
    pages: layers.pages,
    textPages: layers.textPages,
    unreadablePages: unreadable,
    chunks: written.chunks,
  };
  const now = isoNow(deps.clock);
  if (!toOcr.length) {
    if (layers.textPages === 0) throw noUsableText(layers.garbled, config.OCR_ENABLED);
    return orStale(
      await deps.files.recordExtraction(
        msg.fileId,
        msg.runId,
        { next: 'embed', ...read, partsTotal: written.parts },
        now,
      ),
    );
  }

  // OCR: ranges of pages, one message each; the last range to finish records the part count.
  const ranges: number[][] = [];
  for (let i = 0; i < toOcr.length; i += config.OCR_PAGES_PER_MESSAGE)
    ranges.push(toOcr.slice(i, i + config.OCR_PAGES_PER_MESSAGE));
  const recorded = orStale(
    await deps.files.recordExtraction(
      msg.fileId,
      msg.runId,
      {
        next: 'ocr',
        ...read,
        garbledPages: layers.garbled,
        extractParts: written.parts,
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
  return recorded;
}
