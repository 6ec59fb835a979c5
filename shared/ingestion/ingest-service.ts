import '../config/limits.ts';
import '../config/pdf.ts';
import { addFileToCollection, type CollectionDeps } from '../collections/collection-service.ts';
import { attachableChat, attachFile } from '../chats/conversations/attach-file.ts';
import type { z } from 'zod/mini';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { ChatRepository } from '../chats/conversations/chat-repository.ts';
import type { MessageRepository } from '../chats/conversations/message-repository.ts';
import { ConflictError } from '../errors.ts';
import { IngestionFailedError, type PermanentFailure } from '../files/failures.ts';
import { MAX_REDIRECTS, parsePdfUrl, type FetchPolicy } from '../net/guarded-fetch.ts';
import type { StageQueues } from './stage-queues.ts';
import type { UserLimits } from '../limits/user-limits.ts';
import type { WaitingQueue } from '../limits/waiting-queue.ts';
import type { AttachmentRepository } from '../files/attachment-repository.ts';
import type { FileRepository } from '../files/file-repository.ts';
import { isDeletedFile, type FailedFile, type FileRecord } from '../files/file-record.ts';
import { toEmbeddingsData } from '../files/file-view.ts';
import { fileNotFound, ownedFile, queuePlace } from '../files/file-status.ts';
import type { ingestPdfBody } from '../files/schemas.ts';
import { admit } from './admission.ts';
import { urlError } from './url-errors.ts';

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
  const chat = body.chatId ? await attachableChat(deps.chats, body.chatId, userId) : undefined;
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

  const current = await admit(deps, { userId, record, url, force: body.force === true, running });

  if (chat) await attachFile(deps, current, chat.id, userId);
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

/** Whether two URLs name the same document: a presigned URL signed again (X-Amz-* parameters) is the same. */
function sameDocument(stored: string, given: URL): boolean {
  const unsigned = (url: URL) => {
    const copy = new URL(url);
    for (const name of [...copy.searchParams.keys()]) if (/^x-amz-/i.test(name)) copy.searchParams.delete(name);
    return copy.href;
  };
  return unsigned(new URL(stored)) === unsigned(given);
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
