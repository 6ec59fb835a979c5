import { logger } from '../logger.ts';
import { metrics } from '../metrics.ts';
import type { FileRecord, ProcessingFile } from '../files/file-repository.ts';
import {
  keptPrefixOfVectors,
  keptSourceKey,
  partVectorsKey,
  runWorkPrefix,
  sourceKey,
  vectorsKey,
} from '../files/storage.ts';
import { concatPacked, decodePacked, encodePacked } from '../retrieval/packed-vectors.ts';
import { chunkerId } from './chunker.ts';
import type { PipelineDeps } from './pipeline-deps.ts';
import { asError } from '../errors.ts';

// The end of a run, reached by whichever writer makes partsDone equal partsTotal (the last
// embedded part, or pdf-extract when every part was embedded before it finished counting them).
// Idempotent: run twice, it writes the same object and the second completion is refused.

/** True when the record's run has every part embedded and only completion is left. */
export const readyToComplete = <R extends FileRecord>(
  r: R | undefined,
  runId: string,
): r is Extract<R, { status: 'processing' }> =>
  !!r &&
  r.status === 'processing' &&
  r.runId === runId &&
  r.partsTotal !== undefined &&
  (r.partsDone ?? 0) >= r.partsTotal;

/**
 * Steps: read the parts' packed vectors → write the file's packed vectors → delete chunks left
 * over from a longer earlier run → mark the record completed (conditional on the run) → delete
 * the previous run's vectors and this run's work objects. False when the completion was refused:
 * completed by another writer, or superseded or deleted meanwhile (then the vectors just written
 * must not stay: the caller cleans up as after any stale run).
 */
export async function completeRun(deps: PipelineDeps, record: ProcessingFile): Promise<boolean> {
  const { runId } = record;
  const parts = await Promise.all(
    Array.from({ length: record.partsTotal ?? 0 }, async (_, p) =>
      decodePacked(await deps.storage.get(partVectorsKey(record.id, runId, p))),
    ),
  );
  const packed = concatPacked(parts);
  if (packed.count !== record.chunks) throw new Error(`Packed ${packed.count} vectors for ${record.chunks} chunks`);
  const key = vectorsKey(record.id, runId);
  await Promise.all([
    deps.storage.put(key, encodePacked(packed), 'application/octet-stream'),
    // Kept beside the vectors: page images are drawn from it on request (the work files go below).
    deps.storage.copy(sourceKey(record.id, runId), keptSourceKey(record.id, runId)),
  ]);
  await deps.chunks.deleteFrom(record.id, record.chunks ?? 0);
  const config = deps.config;
  const completedAt = deps.clock();
  const before = await deps.files.complete(record, runId, {
    model: record.model!,
    dimensions: packed.dimensions || record.dimensions!,
    chunker: chunkerId(config.CHUNK_TOKENS, config.CHUNK_OVERLAP_TOKENS),
    sha256: record.sha256!,
    vectorsKey: key,
    now: completedAt.toISOString(),
  });
  if (!before) return false;
  await countPages(deps, record);
  logger.info('file completed', { fileId: record.id, runId, chunks: record.chunks, parts: record.partsTotal });
  const durationMs = record.startedAt ? completedAt.getTime() - Date.parse(record.startedAt) : NaN;
  metrics.ingestionCompleted({
    tokens: record.tokens,
    ...((record.pages ?? record.pagesTotal) !== undefined && { pages: (record.pages ?? record.pagesTotal)! }),
    ...(Number.isFinite(durationMs) && { durationMs }),
  });
  await cleanUp(deps, record.id, runId, before.vectorsKey !== key ? before.vectorsKey : undefined);
  return true;
}

/**
 * Adds the run's pages to the owner's usage. Only the writer whose conditional completion won
 * gets here, so a redelivered or concurrent completion counts nothing (docs/DECISIONS.md "Usage
 * counters"); a failure here loses the count, never fails the file.
 */
async function countPages(deps: PipelineDeps, record: ProcessingFile): Promise<void> {
  try {
    await deps.usage.addTotals(record.userId, {
      pages: record.pages ?? record.pagesTotal ?? 0,
      ocrPages: record.ocrPages ?? 0,
    });
  } catch (err) {
    logger.error('could not count the pages ingested', { fileId: record.id, error: asError(err) });
  }
}

/** Best effort: leftovers cost storage, never correctness. */
async function cleanUp(deps: PipelineDeps, fileId: string, runId: string, oldVectorsKey?: string): Promise<void> {
  try {
    await Promise.all([
      deps.storage.deletePrefix(runWorkPrefix(fileId, runId)),
      oldVectorsKey ? deps.storage.deleteKeys([oldVectorsKey]) : undefined,
      // The superseded run's pages (texts, images, its PDF).
      oldVectorsKey?.endsWith('.pvec') ? deps.storage.deletePrefix(keptPrefixOfVectors(oldVectorsKey)) : undefined,
    ]);
  } catch (err) {
    logger.warn('clean-up after completion failed', { fileId, error: asError(err) });
  }
}
