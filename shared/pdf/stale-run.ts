import { isDeletedFile, type FileRecord } from '../files/file-repository.ts';
import { runWorkPrefix, vectorsKey, vectorsPrefix, workPrefix } from '../files/storage.ts';
import { logger } from '../logger.ts';
import type { PipelineDeps } from './pipeline-deps.ts';

// What a stage does when it finds that its run is no longer the file's current one. A stage
// writes (a source PDF, part files, chunk items, packed vectors) before its conditional update
// of the record tells it whether the run still counts, so DELETE /upload can run to its end in
// between and leave those writes behind for good. Every stage therefore
// cleans up when it sees a stale run, at the start (a redelivered message) and after a refused
// update; a stage added later (OCR, DLQ consumers) calls the same function.
//   - The file is gone or being deleted: everything of it goes — chunk items, work/, vectors/
//     (the delete may have listed the bucket before these writes landed). Ids are never reused,
//     so nothing of a later file can be hit.
//   - A newer run superseded this one (force): only this run's work objects go; chunk keys are
//     shared between runs, and the newer run owns them now.
//   - The run is still the file's (completed or failed): nothing to do.

/** Cleans up after a stale run, given the record as the stage last read it (undefined: gone). */
export async function cleanUpStaleRun(
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
  const ownVectors = vectorsKey(fileId, runId);
  await Promise.all([
    deps.storage.deletePrefix(runWorkPrefix(fileId, runId)),
    // A completed run's vectors serve retrieval until the run that superseded it completes.
    current?.vectorsKey !== ownVectors ? deps.storage.deleteKeys([ownVectors]) : undefined,
  ]);
}

/** Every chunk item and object of a deleted file (the upload itself is DELETE /upload's). */
export async function purgeFile(deps: Pick<PipelineDeps, 'chunks' | 'storage'>, fileId: string): Promise<void> {
  await Promise.all([
    deps.chunks.deleteFrom(fileId, 0),
    deps.storage.deletePrefix(workPrefix(fileId)),
    deps.storage.deletePrefix(vectorsPrefix(fileId)),
  ]);
}

/** True when a record read by a stage belongs to its run and that run is still in progress. */
export const isCurrentRun = <R extends FileRecord>(
  record: R | undefined,
  runId: string,
): record is Extract<R, { status: 'processing' }> =>
  !!record && record.status === 'processing' && record.runId === runId;
