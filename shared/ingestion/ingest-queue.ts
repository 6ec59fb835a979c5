import { isoNow, type Clock } from '../clock.ts';
import { asError, LimitExceededError } from '../errors.ts';
import { logger } from '../observability/logger.ts';
import { metrics } from '../observability/metrics.ts';
import type { FileRepository } from '../files/file-repository.ts';
import { isDeletedFile, type FileRecord } from '../files/file-record.ts';
import type { HeldSlot } from '../limits/in-flight-slots.ts';
import type { UserLimits } from '../limits/user-limits.ts';
import { INGESTION_QUEUE, type WaitingEntry, type WaitingQueue } from '../limits/waiting-queue.ts';
import type { StageQueues } from './stage-queues.ts';

// Fair bulk ingestion (docs/DECISIONS.md "Fair bulk ingestion"): a user has at most
// PDF_MAX_IN_FLIGHT_PER_USER runs in the pipeline (in-flight slots); an ingestion admitted while
// all of them are held waits in the user's queue in the table (up to PDF_MAX_QUEUED_PER_USER),
// its run started but marked queued, and nothing of it is sent to a stage. Whenever one of the
// user's runs ends (completed, failed, dead-lettered, deleted, superseded) its ender calls
// `releaseWaiting` with that run, which frees the run's slot and hands the freed slots to the
// oldest waiting runs and sends their fetch. A superseded run's ender is the first stage that
// sees it is no longer the file's current run (run-stage.ts). The queues are
// shared, so another user's PDF waits behind at most the slots' worth of each user's files.
// The data sweep calls `releaseStuck` for whatever a lost release left waiting.

export interface IngestQueueDeps {
  files: FileRepository;
  waiting: WaitingQueue;
  limits?: Pick<UserLimits, 'takeInFlight' | 'releaseInFlight' | 'releaseInFlightOf'>;
  queues: StageQueues;
  clock: Clock;
}

const KIND = INGESTION_QUEUE;
/** Entries read from the queue at a time while slots are free. */
const BATCH = 10;

/**
 * How long an ingestion's slot is held before its run starts (the size probe and the start; a
 * request that dies meanwhile frees it then), and once the run started: a run that ends frees its
 * slot at once (the next admission sees the record), so the run's lease only bounds a run stuck
 * in processing.
 */
export const ADMISSION_LEASE_MS = 60_000;
export const RUN_LEASE_MS = 6 * 3_600_000;

/** An ingestion's in-flight slot names its file and run. */
export const slotHolder = (fileId: string, runId: string) => `${fileId}#${runId}`;

/** A run that ended: its slot is given back before the waiting runs are released. */
export interface EndedRun {
  fileId: string;
  runId: string;
}

/**
 * Whether the run holding a slot has ended (completed, failed, deleted, superseded): its slot is
 * free. A run that is not the file's current one may still be about to start while its admission
 * lease runs.
 */
export async function runEnded(files: FileRepository, held: HeldSlot, now: number): Promise<boolean> {
  const [fileId = '', runId = ''] = held.holder.split('#');
  const record = await files.get(fileId);
  if (isDeletedFile(record)) return true;
  if (record!.status !== 'uploaded' && record!.runId === runId) return record!.status !== 'processing';
  return now - held.takenAt > ADMISSION_LEASE_MS;
}

/**
 * Takes one of the user's ingestion slots for a run; when every slot is held, `full` if the run
 * may wait (`queueWhenFull`), else the LimitExceededError (429).
 */
export async function takeIngestionSlot(
  deps: Pick<IngestQueueDeps, 'files' | 'limits' | 'clock'>,
  p: { userId: string; fileId: string; runId: string; leaseMs: number; queueWhenFull: boolean },
): Promise<HeldSlot | undefined | 'full'> {
  try {
    return await deps.limits?.takeInFlight(p.userId, KIND, {
      holder: slotHolder(p.fileId, p.runId),
      leaseMs: p.leaseMs,
      reclaimable: (held) => runEnded(deps.files, held, deps.clock().getTime()),
    });
  } catch (err) {
    if (err instanceof LimitExceededError && p.queueWhenFull) return 'full';
    throw err;
  }
}

/** LimitExceededError when `maxQueued` of the user's ingestions already wait. */
export async function assertRoomInQueue(deps: Pick<IngestQueueDeps, 'waiting'>, userId: string, maxQueued: number) {
  const waiting = await deps.waiting.count(userId, KIND, { upTo: maxQueued });
  if (waiting >= maxQueued) {
    throw new LimitExceededError(
      `You already have ${maxQueued} PDF ingestions waiting; wait for some to finish`,
      60,
      'INGESTION_QUEUE_FULL',
    );
  }
}

/** The queue entry of a run about to start queued. */
export const waitingEntry = (userId: string, fileId: string, runId: string, queuedAt: string): WaitingEntry => ({
  subject: userId,
  kind: KIND,
  id: fileId,
  runId,
  queuedAt,
});

const isQueuedRun = (record: FileRecord | undefined, runId: string) =>
  record?.status === 'processing' && record.runId === runId && record.queuedAt !== undefined;

/**
 * Whether a waiting entry whose run does not wait (now) never will: the file is deleted, or its
 * run started and has left the queue (released, ended), or another run is the file's and the
 * entry is older than an admission. A younger one may be of a run about to start: its entry is
 * written before its run (`startIngestion`), whose writer removes it if the run does not start;
 * dropping it here would leave that run queued with nothing to release it.
 */
function entryDone(record: FileRecord | undefined, entry: WaitingEntry, now: number): boolean {
  if (isDeletedFile(record)) return true;
  if (record!.status !== 'uploaded' && record!.runId === entry.runId) return true;
  return now - Date.parse(entry.queuedAt) > ADMISSION_LEASE_MS;
}

/**
 * Steps: free the slot of the run that ended (`ended`; only while that run still holds it, so
 * another run's slot is never freed and a second release changes nothing) → for the oldest
 * waiting entries while a slot can be taken: the entry's record (an entry whose run no longer
 * waits and never will, `entryDone`, is dropped; one of a run about to start is passed over) →
 * take a slot (none free: stop) → take the run out of the queue (conditional: one releaser wins,
 * the loser frees its slot) → drop the entry → send its fetch. How many runs were released.
 */
export async function releaseWaiting(deps: IngestQueueDeps, userId: string, ended?: EndedRun): Promise<number> {
  if (ended) await deps.limits?.releaseInFlightOf(userId, KIND, slotHolder(ended.fileId, ended.runId));
  let released = 0;
  for (;;) {
    const entries = await deps.waiting.oldest(userId, KIND, BATCH);
    // A batch that moves nothing (every entry passed over) ends the release: reading it again would too.
    let moved = false;
    for (const entry of entries) {
      const record = await deps.files.get(entry.id);
      if (!isQueuedRun(record, entry.runId)) {
        if (entryDone(record, entry, deps.clock().getTime())) {
          await deps.waiting.remove(entry);
          moved = true;
        }
        continue;
      }
      moved = true;
      const slot = await takeIngestionSlot(deps, {
        userId,
        fileId: entry.id,
        runId: entry.runId,
        leaseMs: RUN_LEASE_MS,
        queueWhenFull: true,
      });
      if (slot === 'full') return released;
      const now = isoNow(deps.clock);
      const left = await deps.files.leaveQueue(entry.id, entry.runId, now);
      await deps.waiting.remove(entry);
      if (!left) {
        await deps.limits?.releaseInFlight(slot);
        continue;
      }
      try {
        await deps.queues.send('pdf-fetch', [{ fileId: entry.id, runId: entry.runId }]);
        released++;
      } catch (err) {
        logger.error('could not queue a waiting ingestion', { fileId: entry.id, error: asError(err) });
        const reason = { reason: 'PROCESSING_FAILED' as const, message: 'The ingestion could not be queued' };
        if (await deps.files.fail(entry.id, entry.runId, reason, now)) metrics.ingestionFailed('PROCESSING_FAILED');
        await deps.limits?.releaseInFlight(slot);
      }
    }
    if (!moved) return released;
  }
}

/**
 * The sweep's fallback for a release that was lost (an ender that died before releasing): every
 * user with a queued run gets a release. How many runs were released.
 */
export async function releaseStuck(deps: IngestQueueDeps): Promise<number> {
  const processing = await deps.files.listProcessing();
  const owners = new Set(processing.filter((r) => r.status === 'processing' && r.queuedAt).map((r) => r.userId));
  let released = 0;
  for (const userId of owners) released += await releaseWaiting(deps, userId);
  return released;
}

/** What a run's ender calls: `releaseWaiting` on its deployment's queues. */
export type ReleaseWaiting = (userId: string, ended?: EndedRun) => Promise<unknown>;

/**
 * Best effort after a run ended (`ended`; absent: a slot may have been freed otherwise): its slot
 * freed and the waiting runs released. A release that fails is the sweep's to do (and the slot is
 * reclaimed once its run is seen to have ended: `runEnded`).
 */
export async function releaseAfterRunEnded(
  release: ReleaseWaiting | undefined,
  userId: string,
  ended?: EndedRun,
): Promise<void> {
  if (!release) return;
  try {
    await release(userId, ended);
  } catch (err) {
    logger.warn('could not release waiting ingestions', { userId, error: asError(err) });
  }
}
