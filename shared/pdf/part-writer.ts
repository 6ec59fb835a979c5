import { estimateTokens } from '../ai/tokens.ts';
import type { Chunk } from '../files/chunk-repository.ts';
import { pageBlockKey, pageBlockOf, partKey } from '../files/storage.ts';
import { Chunker } from './chunker.ts';
import type { PartFile } from './messages.ts';
import { PartPlanner } from './parts.ts';
import type { PipelineDeps } from './pipeline-deps.ts';
import type { RunMessage } from './current-run.ts';
import { countTextTokens } from './tokens.ts';
import type { PageLayout } from './positions.ts';
import type { StoredPage } from './page-service.ts';

// Pages of text → token-aware chunks → parts (one embedding request each), each written and
// queued to pdf-embed as soon as it is full, so embedding overlaps with what produces the text.
// pdf-extract feeds it text layers page by page; pdf-ocr the recognised pages, its chunks and
// parts numbered after pdf-extract's. Each page's text is also kept as it was chunked (with the
// page's size), for GET /message/pdf/{fileId}/pages/{page}: the text sources' offsets index.
// pdf-extract and pdf-ocr keep theirs in objects of their own (each writes whole blocks).

interface PartWriter {
  page(page: number, text: string, layout?: PageLayout): void;
  /** Writes the last part, then waits for every write: a write still in flight after the stage
   * ended would land after the clean-up of a redelivery. */
  finish(): Promise<{ chunks: number; parts: number }>;
}

export function partWriter(
  deps: PipelineDeps,
  run: RunMessage,
  options: { firstChunk?: number; firstPart?: number; recognised?: boolean } = {},
): PartWriter {
  const { config } = deps;
  const chunker = new Chunker({
    chunkTokens: config.CHUNK_TOKENS,
    overlapTokens: config.CHUNK_OVERLAP_TOKENS,
    countTokens: countTextTokens,
    firstIndex: options.firstChunk ?? 0,
  });
  const pending: Promise<void>[] = [];
  const planner = new PartPlanner(
    {
      maxInputs: Math.min(config.EMBEDDING_BATCH_SIZE, config.CHUNKS_PER_PART),
      maxTokens: config.EMBEDDING_BATCH_MAX_TOKENS,
    },
    // The provider splits requests by its own (conservative) estimate: count with it too.
    (chunk) => Math.max(chunk.tokens, estimateTokens(chunk.text)),
    (part, chunks) => {
      const written = writePart(deps, run, part, chunks);
      written.catch(() => undefined); // awaited in finish(); never an unhandled rejection meanwhile
      pending.push(written);
    },
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
  // Page texts go out a block of pages per object (a PUT per page would cost more than the rest of
  // extraction); pages arrive in ascending order.
  let block: StoredPage[] = [];
  let blockNumber = -1;
  const writeBlock = () => {
    if (!block.length) return;
    const key = pageBlockKey(run.fileId, run.runId, blockNumber, options.recognised ? 'ocr' : 'text');
    const written = deps.storage.put(key, JSON.stringify({ pages: block }), 'application/json');
    written.catch(() => undefined); // awaited in finish()
    pending.push(written);
    block = [];
  };
  return {
    page: (page, text, layout) => {
      if (pageBlockOf(page) !== blockNumber) {
        writeBlock();
        blockNumber = pageBlockOf(page);
      }
      block.push({ page, width: layout?.width ?? 0, height: layout?.height ?? 0, text });
      add(chunker.push(page, text, layout));
    },
    async finish() {
      writeBlock();
      add(chunker.finish());
      planner.flush();
      const failed = (await Promise.allSettled(pending)).find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
      return { chunks, parts: planner.parts };
    },
  };
}

async function writePart(deps: PipelineDeps, run: RunMessage, part: number, chunks: Chunk[]): Promise<void> {
  const key = partKey(run.fileId, run.runId, part);
  const body: PartFile = { fileId: run.fileId, runId: run.runId, part, chunks };
  await deps.storage.put(key, JSON.stringify(body), 'application/json');
  await deps.queues.send('pdf-embed', [{ fileId: run.fileId, runId: run.runId, part, key }]);
}
