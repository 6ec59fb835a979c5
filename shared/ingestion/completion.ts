import '../config/chunking.ts';
import { logger } from '../observability/logger.ts';
import { metrics } from '../observability/metrics.ts';
import type { FileRecord, ProcessingFile } from '../files/file-record.ts';
import { keptPrefixOfVectors, keptSourceKey, runWorkPrefix, sourceKey } from '../files/storage.ts';
import { chunkerId } from './chunker.ts';
import type { PipelineDeps } from './pipeline-deps.ts';
import { asError, errorName } from '../errors.ts';
import { releaseAfterRunEnded } from './ingest-queue.ts';

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
  const [packed] = await Promise.all([
    deps.vectors.gatherRun({ userId: record.userId, fileId: record.id, runId }, record.partsTotal ?? 0),
    keepSource(deps, record.id, runId),
  ]);
  if (packed.count !== record.chunks) throw new Error(`Packed ${packed.count} vectors for ${record.chunks} chunks`);
  const { key } = packed;
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
  if (!before) {
    // Refused: a twin completed this same run (its vectors stay), or the run was superseded or the
    // file deleted meanwhile: the vectors just gathered belong to no one (objects: the runner's clean-up).
    const now = await deps.files.get(record.id);
    if (now?.status !== 'completed' || now.runId !== runId) await deps.vectors.removeRun(record.userId, record.id, key);
    return false;
  }
  await countPages(deps, record);
  await deps.events?.emit(record.userId, 'file.completed', {
    fileId: record.id,
    fileName: record.fileName,
    pages: record.pages ?? record.pagesTotal,
    chunks: record.chunks,
  });
  logger.info('file completed', { fileId: record.id, runId, chunks: record.chunks, parts: record.partsTotal });
  const durationMs = record.startedAt ? completedAt.getTime() - Date.parse(record.startedAt) : NaN;
  metrics.ingestionCompleted({
    tokens: record.tokens,
    ...((record.pages ?? record.pagesTotal) !== undefined && { pages: (record.pages ?? record.pagesTotal)! }),
    ...(Number.isFinite(durationMs) && { durationMs }),
  });
  await cleanUp(deps, record, runId, before.vectorsKey !== key ? before.vectorsKey : undefined);
  await releaseAfterRunEnded(deps.releaseWaiting, record.userId, { fileId: record.id, runId });
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
      // Pages recognised again; chunks taken from an earlier file recognised nothing.
      ocrPages: record.extractedFrom ? 0 : (record.ocrPages ?? 0),
    });
  } catch (err) {
    logger.error('could not count the pages ingested', { fileId: record.id, error: asError(err) });
  }
}

/**
 * The run's PDF, kept beside its vectors: page images are drawn from it on request (the work files
 * are deleted below). Without it (gone from the work prefix) the file still completes: retrieval
 * does not need it, and the page route says the file must be ingested again to draw its pages.
 */
async function keepSource(deps: PipelineDeps, fileId: string, runId: string): Promise<void> {
  try {
    await deps.storage.copy(sourceKey(fileId, runId), keptSourceKey(fileId, runId));
  } catch (err) {
    if (errorName(err) !== 'NoSuchKey') throw err;
    logger.warn('the run has no PDF to keep: its pages cannot be drawn', { fileId, runId });
  }
}

/** Best effort: leftovers cost storage, never correctness. */
async function cleanUp(
  deps: PipelineDeps,
  record: ProcessingFile,
  runId: string,
  oldVectorsKey?: string,
): Promise<void> {
  const fileId = record.id;
  try {
    await Promise.all([
      deps.storage.deletePrefix(runWorkPrefix(fileId, runId)),
      oldVectorsKey ? deps.vectors.removeRun(record.userId, fileId, oldVectorsKey) : undefined,
      // The superseded run's pages (texts, images, its PDF).
      oldVectorsKey ? deps.storage.deletePrefix(keptPrefixOfVectors(oldVectorsKey)) : undefined,
    ]);
  } catch (err) {
    logger.warn('clean-up after completion failed', { fileId, error: asError(err) });
  }
}
