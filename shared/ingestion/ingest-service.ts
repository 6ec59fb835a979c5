import { addFileToCollection, type CollectionDeps } from '../collections/collection-service.ts';
import { createId } from '@paralleldrive/cuid2';
import type { z } from 'zod/mini';
import { isoNow, type Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { ChatRepository } from '../chats/chat-repository.ts';
import type { MessageRepository } from '../chats/message-repository.ts';
import { ConflictError, InvalidInputError, asError } from '../errors.ts';
import { isConditionFailure } from '../dynamo.ts';
import { logger } from '../logger.ts';
import { metrics } from '../metrics.ts';
import { clientFailure, IngestionFailedError, PermanentFailure, RetryableFailure } from '../files/failures.ts';
import { MAX_REDIRECTS, parsePdfUrl, probeSize, type FetchPolicy } from '../net/guarded-fetch.ts';
import type { StageQueues } from './stage-queues.ts';
import type { UserLimits } from '../limits/user-limits.ts';
import type { WaitingQueue } from '../limits/waiting-queue.ts';
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
import type { AttachmentRepository } from '../files/attachment-repository.ts';
import { isDeletedFile, type FailedFile, type FileRecord, type FileRepository } from '../files/file-repository.ts';
import { toEmbeddingsData } from '../files/file-view.ts';
import { fileNotFound, ownedFile, queuePlace } from '../files/file-status.ts';
import { uploadKey } from '../files/storage.ts';
import type { ingestPdfBody } from '../files/schemas.ts';

// POST /message/pdf and GET /message/pdf/{fileId}.

export interface IngestDeps {
  files: FileRepository;
  attachments: AttachmentRepository;
  chats: ChatRepository;
  messages: MessageRepository;
  queues: StageQueues;
  /**
   * The user's limits: an ingestion starts only while some of the daily token budget is left, and
   * in one of the user's in-flight slots. Absent: none.
   */
  limits?: Pick<
    UserLimits,
    'assertTokensLeft' | 'takeInFlight' | 'extendInFlight' | 'releaseInFlight' | 'releaseInFlightOf'
  >;
  /** The users' queues of ingestions waiting for a slot (docs/DECISIONS.md "Fair bulk ingestion"). */
  waiting: WaitingQueue;
  settings: IngestSettings;
  clock: Clock;
  /** The collection a file joins (body.collectionId); absent: none can be named. */
  collections?: Omit<CollectionDeps, 'clock'>;
}

interface IngestSettings {
  /** The SSRF guard's settings for the size probe. */
  probe: FetchPolicy;
  /** How long to wait for the pipeline before answering that it is still in progress (PDF_SYNC_WAIT_MS). */
  syncWaitMs: number;
  /** Ingestions a user may have waiting for a slot (PDF_MAX_QUEUED_PER_USER; 0: none, refused at once). */
  maxQueued: number;
}

interface IngestRequest {
  userId: string;
  body: z.infer<typeof ingestPdfBody>;
  /** What the invocation has left (the wait is cut to fit). */
  remainingMs?: number;
}

const FINISHED = new Set(['completed', 'failed']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A failed ingestion as the error of the request that waited for it. */
const failureError = (record: FailedFile) =>
  new IngestionFailedError(record.failure ?? { reason: 'PROCESSING_FAILED', message: 'Processing failed' });

/**
 * What the service's own bucket answered for the file's own upload URL (the downloadUrl of
 * POST /upload), said plainly: the bucket is ours, so saying it tells no one anything about a
 * host they could not reach themselves.
 */
const OWN_UPLOAD_ANSWERS: Record<number, { message: string; code: string }> = {
  404: {
    message:
      'Nothing has been uploaded for this file yet: PUT the PDF to the uploadUrl of POST /upload (with its uploadHeaders), then send this again',
    code: 'NOT_UPLOADED',
  },
  403: {
    message:
      'The storage refused this download URL: it has expired or was altered. Upload the PDF again (POST /upload)',
    code: 'URL_EXPIRED',
  },
};

/** Whether a URL points at a file's own upload in the bucket (path-style or virtual-hosted). */
const isOwnUpload = (url: URL, userId: string, fileId: string) =>
  decodeURIComponent(url.pathname).endsWith(`/${uploadKey(userId, fileId)}`);

/**
 * A URL refused or a size check failed: InvalidInputError with the reason (URL_REFUSED, TOO_LARGE,
 * DOWNLOAD_FAILED). A failed size check says its cause class only (clientFailure), except for the
 * file's own upload URL, whose bucket's answer is said plainly (OWN_UPLOAD_ANSWERS).
 */
function urlError(err: PermanentFailure | RetryableFailure, ownUpload = false): InvalidInputError {
  const own = ownUpload && err.httpStatus !== undefined ? OWN_UPLOAD_ANSWERS[err.httpStatus] : undefined;
  if (own)
    return new InvalidInputError(own.message, [{ path: 'body.url', message: own.message, code: own.code }], own.code);
  const { message } = clientFailure(err);
  if (message !== err.message) logger.info('size check failed', { reason: err.reason, detail: err.message });
  return new InvalidInputError(message, [{ path: 'body.url', message, code: err.reason }], err.reason);
}

/** Time kept to answer after the wait (API Gateway stops at 29 s). */
const ANSWER_MARGIN_MS = 2_000;

/** The ingestion's settings under this configuration. */
export const ingestSettings = (config: Config): IngestSettings => ({
  probe: {
    allowLoopback: config.PDF_ALLOW_LOOPBACK,
    maxBytes: config.PDF_MAX_BYTES,
    // The size probe is one small request: it gets a short timeout of its own (PDF_PROBE_TIMEOUT_MS).
    timeoutMs: Math.min(config.PDF_FETCH_TIMEOUT_MS, config.PDF_PROBE_TIMEOUT_MS),
    maxRedirects: MAX_REDIRECTS,
  },
  syncWaitMs: config.PDF_SYNC_WAIT_MS,
  maxQueued: config.PDF_MAX_QUEUED_PER_USER,
});

/** How long a request waits for its run: PDF_SYNC_WAIT_MS, within what the invocation has left after the probe and the answer. */
const syncWaitMs = (configuredMs: number, probeMs: number, remainingMs = Number.POSITIVE_INFINITY): number =>
  Math.max(0, Math.min(configuredMs, remainingMs - ANSWER_MARGIN_MS - probeMs));

/**
 * Steps: check the URL's form → the caller's file record (not found otherwise) → the caller's
 * active file chat when chatId is given → the file joins the caller's collection when
 * collectionId is given → a file already processing or completed is not ingested
 * again (unless force) → refused when the user's daily token budget is spent → take one of the
 * user's PDF_MAX_IN_FLIGHT_PER_USER slots (refused when all are held; freed below when no run
 * starts here) → SSRF guard and size probe (refused at once) → start a run (conditional, so two
 * requests start one) → queue pdf-fetch → attach to the chat → wait for the run: completed or
 * still processing, the typed failure as an error, not found when the file was deleted meanwhile.
 */
export async function ingestPdf(deps: IngestDeps, { userId, body, remainingMs }: IngestRequest) {
  const { settings } = deps;
  let url: URL;
  try {
    url = parsePdfUrl(body.url);
  } catch (err) {
    throw urlError(err as PermanentFailure);
  }
  const record = await ownedFile(deps, { userId, fileId: body.fileId });
  const chat = body.chatId ? await deps.chats.getOwned(body.chatId, userId) : undefined;
  if (chat && chat.type !== 'file') {
    throw new InvalidInputError('PDFs can only be attached to a chat of type file', [
      { path: 'body.chatId', message: 'Not a file chat' },
    ]);
  }
  if (chat && chat.status !== 'active') {
    throw new InvalidInputError('The chat is deactivated', [
      { path: 'body.chatId', message: 'The chat is deactivated' },
    ]);
  }
  if (body.collectionId !== undefined) {
    // The file joins before its run starts: a collection chat sees it as soon as it completes.
    if (!deps.collections) throw new Error('ingestPdf needs the collections to add a file to one');
    const { collectionId } = body;
    await addFileToCollection({ ...deps.collections, clock: deps.clock }, { userId, collectionId, fileId: record.id });
  }

  const running = record.status === 'processing' || record.status === 'completed';
  if (running && !body.force && record.sourceUrl && !sameDocument(record.sourceUrl, url)) {
    // Answering with the run of the old URL would pass the new one over in silence.
    throw new ConflictError(
      'This file is already ingested (or being ingested) from another URL; send force: true to ingest it from this one',
      'URL_CHANGED',
    );
  }

  let current: FileRecord | undefined;
  // The run a forced one replaces gives its slot back as soon as the new run has started, not
  // only when its next stage sees it was superseded (docs/DECISIONS.md "Fair bulk ingestion").
  const replaced =
    body.force && (record.status === 'processing' || record.status === 'completed')
      ? { fileId: record.id, runId: record.runId }
      : undefined;
  const release = (id: string, ended?: EndedRun) => releaseWaiting(deps, id, ended);
  if (body.force || !running) {
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
      queueWhenFull: settings.maxQueued > 0,
    });
    if (slot === 'full') {
      await assertRoomInQueue(deps, userId, settings.maxQueued);
      current = await startIngestion(deps, { userId, record, url, runId, force: body.force === true, queued: true });
      // A slot freed between the refusal and the entry's write would have found no one waiting.
      if (current) await releaseAfterRunEnded(release, userId, replaced);
    } else {
      try {
        current = await startIngestion(deps, { userId, record, url, runId, force: body.force === true });
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

  if (chat) await attach(deps, current, chat.id, userId);
  // A queued run is answered at once: its turn may be far off.
  const waitMs =
    current.status === 'processing' && current.queuedAt
      ? 0
      : syncWaitMs(settings.syncWaitMs, settings.probe.timeoutMs, remainingMs);
  const final = await waitForRun(deps.files, current, waitMs);
  if (final.status === 'failed') throw failureError(final);
  const embeddingsData = toEmbeddingsData(final, await queuePlace(deps, final));
  return { completed: final.status === 'completed', embeddingsData };
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

/** Whether two URLs name the same document: a presigned URL signed again (X-Amz-* parameters) is the same. */
function sameDocument(stored: string, given: URL): boolean {
  const unsigned = (url: URL) => {
    const copy = new URL(url);
    for (const name of [...copy.searchParams.keys()]) if (/^x-amz-/i.test(name)) copy.searchParams.delete(name);
    return copy.href;
  };
  return unsigned(new URL(stored)) === unsigned(given);
}

/** The file in the chat's partition and a `type: file` message, once per chat. */
async function attach(deps: IngestDeps, record: FileRecord, chatId: string, userId: string): Promise<void> {
  const attachedAt = isoNow(deps.clock);
  try {
    await deps.files.addChat(record.id, chatId);
  } catch (err) {
    if (isConditionFailure(err)) throw fileNotFound(); // deleted meanwhile
    throw err;
  }
  const added = await deps.attachments.attach({
    chatId,
    fileId: record.id,
    fileName: record.fileName,
    userId,
    attachedAt,
  });
  if (!added) return;
  await deps.messages.append({
    chatId,
    userId,
    message: `Attached file: ${record.fileName} (${record.id})`,
    messageType: 'user',
    type: 'file',
    timestamp: attachedAt,
  });
  record.chatIds = [...new Set([...(record.chatIds ?? []), chatId])].sort();
}

/** Polls the record (consistent reads) until the run finishes or `waitMs` passes. */
async function waitForRun(files: FileRepository, start: FileRecord, waitMs: number): Promise<FileRecord> {
  let record = start;
  const deadline = Date.now() + waitMs;
  let interval = 20;
  while (!FINISHED.has(record.status) && Date.now() < deadline) {
    await sleep(Math.min(interval, Math.max(0, deadline - Date.now())));
    // At most 50 ms between reads: the caller waits for whatever the last interval overshoots
    // (500 ms cost a 300-page PDF about 110 ms on average, see bench/README.md); 400 consistent
    // reads over the longest wait are cheap.
    interval = Math.min(50, interval + 10);
    const latest = await files.get(start.id);
    // Deleted while we waited (DELETE /upload retires the run, then removes the record).
    if (isDeletedFile(latest)) throw fileNotFound();
    record = latest!;
  }
  return record;
}
