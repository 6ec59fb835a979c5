import { isDeletedFile, type FileRecord, type ProcessingFile } from '../files/file-record.ts';
import { keptRunPrefix, lexicalKey, runWorkPrefix, vectorsKey, vectorsPrefix, workPrefix } from '../files/storage.ts';
import { logger } from '../observability/logger.ts';
import { releaseAfterRunEnded } from './ingest-queue.ts';
import { completeRun, readyToComplete } from './completion.ts';
import type { PipelineDeps } from './pipeline-deps.ts';

// A run's life around each stage's work, written once: every stage is a `runStage(work)`.
//   - The record is read once, before the work; a message of a run that is no longer the file's
//     current one (superseded, deleted, finished) is cleaned up after and skipped.
//   - A conditional write of the run that is refused means the run ended meanwhile: the work
//     throws `StaleRun` (`orStale`) and the clean-up happens here.
//   - The work returns the record after its last write; when that makes every part embedded,
//     the file is completed here, whichever stage got there.
//
// Why clean up at all: a stage writes (a source PDF, part files, chunk items, packed vectors)
// before its conditional update tells it whether the run still counts, so DELETE /upload can
// run to its end in between and leave those writes behind for good.
//   - The file is gone or being deleted: everything of it goes — chunk items, work/, vectors/
//     (the delete may have listed the bucket before these writes landed). Ids are never reused,
//     so nothing of a later file can be hit.
//   - A newer run superseded this one (force): only this run's work objects go; chunk keys are
//     shared between runs, and the newer run owns them now. The superseded run gives its
//     in-flight slot back here, at once, and the user's waiting runs are released (the newer run
//     may be one of them): nothing else ends it, and until then it holds a slot no run uses.
//   - The run is still the file's (completed or failed): nothing to do.

export interface RunMessage {
  fileId: string;
  runId: string;
}

/** The run ended while a stage worked on it: the stage stops, its runner cleans up. */
class StaleRun extends Error {
  constructor(readonly record?: FileRecord) {
    super('The run is no longer the file’s current one');
    this.name = 'StaleRun';
  }
}

/** The result of a conditional write of the run; refused (undefined): the run is stale, stop. */
export function orStale<T>(written: T | undefined): T {
  if (written === undefined) throw new StaleRun();
  return written;
}

/** True when a record read by a stage belongs to its run and that run is still in progress. */
export const isCurrentRun = <R extends FileRecord>(
  record: R | undefined,
  runId: string,
): record is Extract<R, { status: 'processing' }> =>
  !!record && record.status === 'processing' && record.runId === runId;

/** What a stage's work returns: the record after its last write, or nothing for the runner to check. */
// biome-ignore lint/suspicious/noConfusingVoidType: a stage that leaves nothing to check just returns
type StageOutcome = FileRecord | undefined | void;

/** What a stage does on the current run's record. */
type StageWork<M extends RunMessage, C> = (
  deps: PipelineDeps,
  msg: M,
  record: ProcessingFile,
  ctx: C,
) => Promise<StageOutcome>;

/** A stage's work under the run guard: `(deps, msg, ctx)`, the context optional when all of it is. */
export function runStage<M extends RunMessage, C>(work: StageWork<M, C>) {
  return async (deps: PipelineDeps, msg: M, ...[ctx]: Partial<C> extends C ? [ctx?: C] : [ctx: C]): Promise<void> => {
    try {
      const record = await deps.files.get(msg.fileId);
      if (!isCurrentRun(record, msg.runId)) throw new StaleRun(record);
      const after = await work(deps, msg, record, (ctx ?? {}) as C);
      if (!after) return;
      if (!isCurrentRun(after, msg.runId)) throw new StaleRun(after);
      if (readyToComplete(after, msg.runId) && !(await completeRun(deps, after))) throw new StaleRun();
    } catch (err) {
      if (!(err instanceof StaleRun)) throw err;
      const record = err.record ?? (await deps.files.get(msg.fileId));
      await cleanUpStaleRun(deps, msg.fileId, msg.runId, record);
    }
  };
}

/** Cleans up after a stale run, given the record as last read (undefined: gone). */
async function cleanUpStaleRun(
  deps: PipelineDeps,
  fileId: string,
  runId: string,
  record: FileRecord | undefined,
): Promise<void> {
  if (isDeletedFile(record)) {
    logger.info('file deleted during ingestion: removing what the pipeline wrote', { fileId, runId });
    await purgeFile(deps, fileId);
    return;
  }
  const current = record!.status === 'uploaded' ? undefined : record!;
  if (current?.runId === runId) return;
  // Conditional on this run still holding the slot: once per run, however many of its messages get here.
  await releaseAfterRunEnded(deps.releaseWaiting, record!.userId, { fileId, runId });
  // A completed run's vectors, and the pages kept beside them, serve until the run that superseded it completes.
  const ownVectors = [vectorsKey(fileId, runId), lexicalKey(fileId, runId)];
  const completedHere = ownVectors.includes(current?.vectorsKey ?? '');
  await Promise.all([
    deps.storage.deletePrefix(runWorkPrefix(fileId, runId)),
    completedHere ? undefined : deps.storage.deleteKeys(ownVectors),
    completedHere ? undefined : deps.storage.deletePrefix(keptRunPrefix(fileId, runId)),
  ]);
}

/** Every chunk item and object of a deleted file (the upload itself is DELETE /upload's). */
async function purgeFile(deps: Pick<PipelineDeps, 'chunks' | 'storage'>, fileId: string): Promise<void> {
  await Promise.all([
    deps.chunks.deleteFrom(fileId, 0),
    deps.storage.deletePrefix(workPrefix(fileId)),
    deps.storage.deletePrefix(vectorsPrefix(fileId)),
  ]);
}
