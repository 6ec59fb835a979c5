import { createId } from '../ids.ts';
import { isoNow } from '../clock.ts';
import { asError } from '../errors.ts';
import { logger } from '../observability/logger.ts';
import { metrics } from '../observability/metrics.ts';
import { PermanentFailure, RetryableFailure } from '../files/failures.ts';
import { isDeletedFile, type FileRecord } from '../files/file-record.ts';
import { fileNotFound } from '../files/file-status.ts';
import { probeSize } from '../net/guarded-fetch.ts';
import {
  ADMISSION_LEASE_MS,
  assertRoomInQueue,
  type EndedRun,
  releaseAfterRunEnded,
  releaseWaiting,
  RUN_LEASE_MS,
  takeIngestionSlot,
  waitingEntry,
} from './ingest-queue.ts';
import type { IngestDeps } from './ingest-service.ts';
import { isOwnUpload, urlError } from './url-errors.ts';

// Admission, in one call: whether a run starts for a file (a forced one, or none running), the
// user's budget, the user's in-flight slot or a place in their queue, the URL's size probe, the
// run started (conditionally: two requests start one) and its first stage queued. What it answers
// is the file's record as the request should report it, whoever started the run.

/**
 * Steps: a run is wanted (forced, or none processing or completed) → tokens left today → a slot
 * (or the queue when every slot is held; refused when queueing is off) → the size probe and the
 * run started, pdf-fetch queued → the slot kept for the run, or freed when another request
 * started it → a forced run's predecessor gives its slot back. The file deleted meanwhile: not found.
 */
export async function admit(
  deps: IngestDeps,
  {
    userId,
    record,
    url,
    force,
    running,
  }: { userId: string; record: FileRecord; url: URL; force: boolean; running: boolean },
): Promise<FileRecord> {
  let current: FileRecord | undefined;
  // The run a forced one replaces gives its slot back as soon as the new run has started, not
  // only when its next stage sees it was superseded (docs/DECISIONS.md "Fair bulk ingestion").
  const replaced =
    force && (record.status === 'processing' || record.status === 'completed')
      ? { fileId: record.id, runId: record.runId }
      : undefined;
  const release = (id: string, ended?: EndedRun) => releaseWaiting(deps, id, ended);
  if (force || !running) {
    await deps.limits?.assertTokensLeft(userId); // its embeddings are charged as they are made
    const runId = createId();
    // Fairness: one user's ingestions cannot fill the pipeline's shared slots. The slot is taken
    // before the size probe, whose length the user's server decides, so requests at once cannot
    // all pass a count made before it (docs/DECISIONS.md "Atomic admission of work in flight").
    // With every slot held the run waits in the user's queue (docs/DECISIONS.md "Fair bulk
    // ingestion"), or is refused when queueing is off.
    const slot = await takeIngestionSlot(deps, {
      userId,
      fileId: record.id,
      runId,
      leaseMs: ADMISSION_LEASE_MS,
      queueWhenFull: deps.settings.maxQueued > 0,
    });
    if (slot === 'full') {
      await assertRoomInQueue(deps, userId, deps.settings.maxQueued);
      current = await startIngestion(deps, { userId, record, url, runId, force: force, queued: true });
      // A slot freed between the refusal and the entry's write would have found no one waiting.
      if (current) await releaseAfterRunEnded(release, userId, replaced);
    } else {
      try {
        current = await startIngestion(deps, { userId, record, url, runId, force: force });
      } catch (err) {
        await deps.limits?.releaseInFlight(slot);
        throw err;
      }
      // Started: the slot is the run's until it ends. Not started (another request did): it is freed.
      if (current) await deps.limits?.extendInFlight(slot, RUN_LEASE_MS);
      else await deps.limits?.releaseInFlight(slot);
      if (current && replaced) await releaseAfterRunEnded(release, userId, replaced);
    }
  }
  // Not started here: another request started or finished it, or the file is being deleted.
  if (!current) {
    const latest = await deps.files.get(record.id);
    if (isDeletedFile(latest)) throw fileNotFound();
    current = latest!;
  }

  return current;
}

/**
 * Probes the URL's size (refused at once), starts the run (conditional: undefined when another
 * request started it) and queues pdf-fetch (a failure to queue fails the run).
 */
async function startIngestion(
  deps: IngestDeps,
  p: { userId: string; record: FileRecord; url: URL; runId: string; force: boolean; queued?: boolean },
): Promise<FileRecord | undefined> {
  const { record, url, runId } = p;
  try {
    await probeSize(url.href, deps.settings.probe);
  } catch (err) {
    if (err instanceof PermanentFailure || err instanceof RetryableFailure)
      throw urlError(err, isOwnUpload(url, p.userId, record.id));
    throw err;
  }
  const now = isoNow(deps.clock);
  // A queued run's entry is written first: a run marked queued always has one to be released by
  // (an entry whose run never started is dropped by the release).
  const entry = p.queued ? waitingEntry(p.userId, record.id, runId, now) : undefined;
  if (entry) await deps.waiting.add(entry);
  const started = await deps.files.startRun({
    id: record.id,
    userId: p.userId,
    runId,
    url: url.href,
    force: p.force,
    now,
    queued: p.queued,
  });
  if (!started && entry) await deps.waiting.remove(entry);
  if (!started || entry) return started;
  try {
    await deps.queues.send('pdf-fetch', [{ fileId: record.id, runId }]);
  } catch (err) {
    logger.error('could not queue the ingestion', { fileId: record.id, error: asError(err) });
    if (
      await deps.files.fail(
        record.id,
        runId,
        { reason: 'PROCESSING_FAILED', message: 'The ingestion could not be queued' },
        now,
      )
    ) {
      metrics.ingestionFailed('PROCESSING_FAILED');
    }
    throw err;
  }
  return started;
}
