import { estimateTokens } from '../ai/tokens.ts';
import { partKey } from '../files/storage.ts';
import { Chunker, type Chunk } from './chunker.ts';
import { extractText } from './extract.ts';
import { RetryableFailure } from './failures.ts';
import type { ExtractMessage, PartFile } from './messages.ts';
import { PartPlanner } from './parts.ts';
import type { PipelineDeps } from './pipeline-deps.ts';
import { completeRun, readyToComplete } from './completion.ts';
import { sendToStage } from './queue.ts';
import { cleanUpStaleRun, isCurrentRun } from './leftovers.ts';
import { countTextTokens } from './tokens.ts';

// pdf-extract: text per page → token-aware chunks → parts (one embedding request each). Parts
// are written and queued while extraction goes on, so embedding overlaps with extraction; the
// part count is recorded at the end, and the file completes when every part is embedded.

export interface ExtractContext {
  /** Milliseconds left before the function times out. */
  remainingMs?: () => number;
}

/** Time kept in reserve to record a failure before the function is stopped. */
const RESERVE_MS = 15_000;

/**
 * Steps: skip a stale message (cleaning up after a deleted file) → read the PDF → extract page by page, chunking as pages arrive;
 * each full part: write its file, queue it → record pages, chunks, parts → complete if every
 * part is already embedded; refused because the run ended meanwhile: clean up what was written.
 */
export async function runExtract(deps: PipelineDeps, msg: ExtractMessage, ctx: ExtractContext = {}): Promise<void> {
  const record = await deps.files.get(msg.fileId);
  if (!isCurrentRun(record, msg.runId)) return cleanUpStaleRun(deps, msg.fileId, msg.runId, record);

  const c = deps.config;
  const bytes = await deps.storage.get(msg.key);
  const chunker = new Chunker({ chunkTokens: c.CHUNK_TOKENS, overlapTokens: c.CHUNK_OVERLAP_TOKENS, countTokens: countTextTokens });
  const pending: Promise<void>[] = [];
  let chunks = 0;
  const planner = new PartPlanner(
    { maxInputs: Math.min(c.EMBEDDING_BATCH_SIZE, c.CHUNKS_PER_PART), maxTokens: c.EMBEDDING_BATCH_MAX_TOKENS },
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

  const result = await extractText(bytes, {
    maxPages: c.PDF_MAX_PAGES,
    onPage: (page, text) => add(chunker.push(page, text)),
    shouldStop: () =>
      ctx.remainingMs && ctx.remainingMs() < RESERVE_MS ? new RetryableFailure('PROCESSING_FAILED', 'Extracting the text took too long') : undefined,
  });
  add(chunker.finish());
  planner.flush();
  // Every write settles before the stage returns or fails: a write still in flight after a
  // failure would land after the clean-up of a redelivery (see leftovers.ts).
  const failed = (await Promise.allSettled(pending)).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;

  const now = deps.now();
  const updated = await deps.files.updateRun(record.id, msg.runId, {
    stage: 'embed',
    pages: result.pages,
    chunks,
    partsTotal: planner.parts,
    extractedAt: now,
    updatedAt: now,
  });
  // Refused: the file was deleted (or re-ingested) while its text was extracted, and the parts
  // written meanwhile must not stay behind.
  if (!updated) return cleanUpStaleRun(deps, record.id, msg.runId, await deps.files.get(record.id));
  if (readyToComplete(updated, msg.runId)) await completeRun(deps, updated);
}

async function writePart(deps: PipelineDeps, msg: ExtractMessage, part: number, chunks: Chunk[]): Promise<void> {
  const key = partKey(msg.fileId, msg.runId, part);
  const body: PartFile = { fileId: msg.fileId, runId: msg.runId, part, chunks };
  await deps.storage.put(key, JSON.stringify(body), 'application/json');
  await sendToStage(deps.sqs, 'pdf-embed', [{ fileId: msg.fileId, runId: msg.runId, part, key }]);
}
