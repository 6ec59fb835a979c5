import '../config/ai.ts';
import '../config/chunking.ts';
import { estimateTokens } from '../ai/tokens.ts';
import type { Chunk, ChunkPlace } from '../files/chunk-repository.ts';
import type { PartLocation } from '../readers/reader.ts';
import { pageBlockKey, pageBlockOf, partKey } from '../files/storage.ts';
import { Chunker } from './chunker.ts';
import type { PageBlock } from '../pdf/layout/page-layout.ts';
import type { PartFile } from './queue-messages.ts';
import { PartPlanner, type PartLimits } from './embed-parts.ts';
import type { PipelineDeps } from './pipeline-deps.ts';
import type { RunMessage } from './run-stage.ts';
import { countTextTokens } from './chunk-tokens.ts';
import type { PageLayout } from '../pdf/positions.ts';
import type { StoredPage } from './page-service.ts';

// Pages of text → token-aware chunks → parts (one embedding request each), each written and
// queued to pdf-embed as soon as it is full, so embedding overlaps with what produces the text.
// pdf-extract feeds it text layers page by page; pdf-ocr the recognised pages, its chunks and
// parts numbered after pdf-extract's. Each page's text is also kept as it was chunked (with the
// page's size), for GET /message/pdf/{fileId}/pages/{page}: the text sources' offsets index.
// pdf-extract and pdf-ocr keep theirs in objects of their own (each writes whole blocks).

/** Pages in, chunks out; `finish` writes what is left and waits for every write. */
interface PageWriter {
  page(page: number, text: string, layout?: PageLayout, blocks?: PageBlock[]): void;
}

/** A part of a document of another format: a page of text with its place in the document. */
export interface PlacedPart {
  part: number;
  text: string;
  blocks: PageBlock[];
  location: PartLocation;
  rows?: number[];
  columns?: [string, string];
}

export interface PartWriter extends PageWriter {
  /** A part of a document of another format than PDF (its chunks say where it is). */
  part(part: PlacedPart): void;
  /** Chunks made already (an earlier file's of the same bytes, a range of a large document's), in order. */
  chunks(list: Chunk[]): void;
  /** Writes the last part, then waits for every write: a write still in flight after the stage
   * ended would land after the clean-up of a redelivery. */
  finish(): Promise<{ chunks: number; parts: number }>;
}

export interface ChunkCollector extends PageWriter {
  /** The range's chunks (numbered from 0), once every page text is written. */
  finish(): Promise<Chunk[]>;
}

interface PageOptions {
  /** Index of the first chunk made here (OCR's are numbered after the text layer's). */
  firstChunk?: number;
  /** The pages are OCR's (their texts are kept apart, their chunks say so). */
  recognised?: boolean;
}

/** Pages → chunks (given to `take` as they are made), each page's text kept in blocks of pages. */
function pageChunker(deps: PipelineDeps, run: RunMessage, options: PageOptions, take: (list: Chunk[]) => void) {
  const { config } = deps;
  const chunker = new Chunker({
    chunkTokens: config.CHUNK_TOKENS,
    overlapTokens: config.CHUNK_OVERLAP_TOKENS,
    countTokens: countTextTokens,
    firstIndex: options.firstChunk ?? 0,
  });
  const pending: Promise<void>[] = [];
  const track = (written: Promise<void>) => {
    written.catch(() => undefined); // awaited in settle(); never an unhandled rejection meanwhile
    pending.push(written);
  };
  // Page texts go out a block of pages per object (a PUT per page would cost more than the rest of
  // extraction); pages arrive in ascending order.
  let block: StoredPage[] = [];
  let blockNumber = -1;
  // Parts of another format: where each is, for the chunks that cover it (a chunk may end later).
  const places = new Map<number, ChunkPlace>();
  const placed = (list: Chunk[]) => (places.size ? list.map((chunk) => withPlaces(chunk, places)) : list);
  const writeBlock = () => {
    if (!block.length) return;
    const key = pageBlockKey(run.fileId, run.runId, blockNumber, options.recognised ? 'ocr' : 'text');
    track(deps.storage.put(key, JSON.stringify({ pages: block }), 'application/json'));
    block = [];
  };
  const keep = (stored: StoredPage) => {
    if (pageBlockOf(stored.page) !== blockNumber) {
      writeBlock();
      blockNumber = pageBlockOf(stored.page);
    }
    block.push(stored);
  };
  return {
    track,
    page(page: number, text: string, layout?: PageLayout, blocks?: PageBlock[]) {
      keep({ page, width: layout?.width ?? 0, height: layout?.height ?? 0, text });
      take(placed(chunker.push(page, text, blocks, layout)));
    },
    part(p: PlacedPart) {
      keep({ page: p.part, width: 0, height: 0, text: p.text, location: p.location });
      places.set(p.part, placeOf(p));
      take(placed(chunker.push(p.part, p.text, p.blocks)));
    },
    /** The last page block and chunk out. */
    end() {
      writeBlock();
      take(placed(chunker.finish()));
    },
    /** Every write awaited (those of `take` too, when tracked). */
    async settle() {
      const failed = (await Promise.allSettled(pending)).find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}

/** A part's place as its chunks carry it: a sheet's rows as offsets where each row's line starts. */
function placeOf(p: PlacedPart): ChunkPlace {
  const place: ChunkPlace = { part: p.part, location: p.location };
  const lines = p.text.split('\n');
  if (p.rows && p.rows.length === lines.length) {
    let at = 0;
    place.rowStarts = lines.map((line, k) => {
      const start: [number, number] = [at, p.rows![k]!];
      at += line.length + 1;
      return start;
    });
    if (p.columns) place.columns = p.columns;
  }
  return place;
}

const withPlaces = (chunk: Chunk, places: Map<number, ChunkPlace>): Chunk => {
  const covered = [...new Set(chunk.pageStarts.map(([, part]) => part))].flatMap((part) => places.get(part) ?? []);
  return covered.length ? { ...chunk, places: covered } : chunk;
};

/** What one part (one embedding request) may carry. */
export const partLimits = (config: PipelineDeps['config']): PartLimits => ({
  maxInputs: Math.min(config.EMBEDDING_BATCH_SIZE, config.CHUNKS_PER_PART),
  maxTokens: config.EMBEDDING_BATCH_MAX_TOKENS,
});

/** A chunk's weight in a part: the provider splits requests by its own (conservative) estimate, so the larger. */
export const partCost = (chunk: Chunk) => Math.max(chunk.tokens, estimateTokens(chunk.text));

/** Where a full part goes: by default its file and a message to pdf-embed (writePart). */
export type PartSink = (part: number, chunks: Chunk[]) => Promise<void>;

export function partWriter(
  deps: PipelineDeps,
  run: RunMessage,
  options: PageOptions & { firstPart?: number; sink?: PartSink; limits?: PartLimits } = {},
): PartWriter {
  const sink = options.sink ?? ((part, chunks) => writePart(deps, run, part, chunks));
  let track: (written: Promise<void>) => void = () => undefined;
  const planner = new PartPlanner(
    options.limits ?? partLimits(deps.config),
    partCost,
    (part, chunks) => track(sink(part, chunks)),
    options.firstPart ?? 0,
  );
  let chunks = 0;
  const add = (list: Chunk[]) => {
    for (const chunk of list)
      planner.add(
        options.recognised ? { ...chunk, ocrPages: [...new Set(chunk.pageStarts.map(([, page]) => page))] } : chunk,
      );
    chunks += list.length;
  };
  const pages = pageChunker(deps, run, options, add);
  track = pages.track;
  return {
    page: pages.page,
    part: pages.part,
    chunks: add,
    async finish() {
      pages.end();
      planner.flush();
      await pages.settle();
      return { chunks, parts: planner.parts };
    },
  };
}

/**
 * One range of a large document's pages: its page texts written like partWriter's, its chunks
 * (numbered from 0) kept for the run's last range to number and plan into parts.
 */
export function chunkCollector(deps: PipelineDeps, run: RunMessage): ChunkCollector {
  const kept: Chunk[] = [];
  const pages = pageChunker(deps, run, {}, (list) => kept.push(...list));
  return {
    page: pages.page,
    async finish() {
      pages.end();
      await pages.settle();
      return kept;
    },
  };
}

/** A part's file, and its message to pdf-embed. */
export async function writePart(deps: PipelineDeps, run: RunMessage, part: number, chunks: Chunk[]): Promise<void> {
  const key = partKey(run.fileId, run.runId, part);
  const body: PartFile = { fileId: run.fileId, runId: run.runId, part, chunks };
  await deps.storage.put(key, JSON.stringify(body), 'application/json');
  await deps.queues.send('pdf-embed', [{ fileId: run.fileId, runId: run.runId, part, key }]);
}
