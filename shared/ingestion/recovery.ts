import { logger } from '../observability/logger.ts';
import type { StageQueues } from './stage-queues.ts';
import type { FileRepository } from '../files/file-repository.ts';
import { partKey, sourceKey } from '../files/storage.ts';

// Restart recovery for the local runtime: the queues survive a restart (fauxqs keeps them in
// DATA_DIR), but a crash between a record's write and its message's send leaves a run with
// nothing queued, and a killed process's messages stay invisible for their visibility timeout,
// while the records still say processing. On start, each such run is queued again at the stage
// it had reached. Every stage is idempotent (stale or repeated messages change nothing, parts
// already embedded are not embedded again), so queuing too much is harmless.

interface RecoveryDeps {
  files: FileRepository;
  queues: StageQueues;
}

/** Re-queues every processing run at its current stage; how many runs were resumed. */
export async function resumeStuckIngestions(deps: RecoveryDeps): Promise<number> {
  const stuck = await deps.files.listProcessing();
  let resumed = 0;
  for (const listed of stuck) {
    const record = await deps.files.get(listed.id);
    if (record?.status !== 'processing') continue;
    const { id: fileId, runId } = record;
    // A queued run has nothing in the pipeline: its release sends its fetch.
    if (record.queuedAt) continue;
    if (record.stage === 'fetch') {
      await deps.queues.send('pdf-fetch', [{ fileId, runId }]);
    } else if (record.stage === 'extract' || record.partsTotal === undefined) {
      await deps.queues.send('pdf-extract', [{ fileId, runId, key: sourceKey(fileId, runId) }]);
    } else {
      // Parts not yet counted; when all are, one message lets pdf-embed finish the completion.
      const parts = Array.from({ length: record.partsTotal }, (_, part) => part);
      const missing = parts.filter((part) => !record.doneParts?.has(part));
      const toSend = missing.length ? missing : [0];
      await deps.queues.send(
        'pdf-embed',
        toSend.map((part) => ({ fileId, runId, part, key: partKey(fileId, runId, part) })),
      );
    }
    resumed++;
  }
  if (resumed) logger.info('resumed interrupted ingestions', { resumed });
  return resumed;
}
