import type { ServiceEvents } from '../events/service-events.ts';
import { createId } from '../ids.ts';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { ChatRepository } from '../chats/conversations/chat-repository.ts';
import type { MessageRepository } from '../chats/conversations/message-repository.ts';
import { isoNow, type Clock } from '../clock.ts';
import { asError, NotFoundError } from '../errors.ts';
import { logger } from '../observability/logger.ts';
import type { CollectionRepository } from '../collections/collection-repository.ts';
import type { FileRepository } from '../files/file-repository.ts';
import { toEmbeddingsData } from '../files/file-view.ts';
import { exportZipKey, uploadKey, type FileStorage } from '../files/storage.ts';
import type { OrderRepository } from '../orders/order-repository.ts';
import { exportChat, exportedChat, exportedMessage } from '../sharing/export.ts';
import { type UserListKind, userListIds } from '../user-index.ts';
import type { ExportJob, ExportRepository, ExportStatus } from './export-repository.ts';
import { MultipartSink } from '../files/multipart-sink.ts';
import { ZipWriter } from './zip-writer.ts';

// POST /me/export and GET /me/export/{exportId}, and the build the sweep runs (docs/DECISIONS.md
// "Account export"): a ZIP of everything of the user, written into the bucket as it is read (a
// multipart upload fed by a streaming ZIP writer), so memory holds one chat's message tree, a page
// of messages and a part, never the archive or a whole PDF.

export interface AccountExportDeps {
  db: DynamoDBDocumentClient;
  table: string;
  exports: ExportRepository;
  chats: ChatRepository;
  messages: MessageRepository;
  files: FileRepository;
  orders: OrderRepository;
  collections: CollectionRepository;
  storage: FileStorage;
  /** The presigning client (s3Client()). */
  s3: S3Client;
  clock: Clock;
  /** The owner's webhooks hear that the export is ready (export.ready); absent: nothing is told. */
  events?: ServiceEvents;
}

/** How long an export (its job and its ZIP) lives. */
export const EXPORT_LIFETIME_SECONDS = 24 * 3600;
/** How long a build holds its job before another sweep may take it again. */
const LEASE_MS = 5 * 60_000;
/** Builds a job may take; then it is failed. */
const MAX_ATTEMPTS = 3;
/** Messages read per request while a chat's tree is written out. */
const MESSAGE_PAGE = 100;
/** The longest a presigned URL may be valid (S3's limit). */
const MAX_URL_SECONDS = 7 * 24 * 3600;

/** POST /me/export: a job to build; its id. */
export async function requestExport(deps: AccountExportDeps, userId: string): Promise<{ exportId: string }> {
  const now = deps.clock();
  const exportId = createId();
  await deps.exports.create({
    id: exportId,
    userId,
    createdAt: now.toISOString(),
    expiresAt: Math.floor(now.getTime() / 1000) + EXPORT_LIFETIME_SECONDS,
  });
  return { exportId };
}

/** GET /me/export/{exportId}: the job's status, and a URL of the ZIP once ready (valid while the export lives). */
export async function getExport(
  deps: AccountExportDeps,
  input: { userId: string; exportId: string },
): Promise<{ status: ExportStatus; url?: string }> {
  const job = await deps.exports.get(input.userId, input.exportId);
  const secondsLeft = job ? job.expiresAt - Math.floor(deps.clock().getTime() / 1000) : 0;
  // TTL deletes an expired item some time later: until then it is already gone to the caller.
  if (!job || secondsLeft <= 0) throw new NotFoundError('Export not found');
  // A build whose lease ran out is retried by the sweep: it is still being built.
  const status = job.status;
  if (status !== 'ready') return { status };
  const url = await getSignedUrl(
    deps.s3,
    new GetObjectCommand({ Bucket: deps.storage.bucket, Key: exportZipKey(job.userId, job.id) }),
    { expiresIn: Math.min(secondsLeft, MAX_URL_SECONDS) },
  );
  return { status, url };
}

/**
 * The sweep's part: builds every export waiting. Steps per job: take its lease (another build
 * holds it: skip) → write the ZIP → mark it ready (or, after MAX_ATTEMPTS failed builds, failed).
 * Stops between jobs when `hasTime()` turns false. How many it finished.
 */
export async function buildPendingExports(
  deps: AccountExportDeps,
  hasTime: () => boolean = () => true,
): Promise<number> {
  let built = 0;
  for await (const waiting of deps.exports.toBuild()) {
    if (!hasTime()) break;
    const now = deps.clock();
    const job = await deps.exports.lease(waiting, now.toISOString(), new Date(now.getTime() + LEASE_MS).toISOString());
    if (!job) continue;
    // Builds that died (a timeout) count too: a job that kills every build stops being taken.
    if (job.attempts > MAX_ATTEMPTS) {
      await deps.exports.finish(job, 'failed', isoNow(deps.clock));
      continue;
    }
    try {
      await writeArchive(deps, job);
    } catch (err) {
      // Left building: a later sweep takes it again once the lease has run out; the rest of this sweep goes on.
      logger.warn('Export build failed', { exportId: job.id, attempts: job.attempts, message: asError(err).message });
      if (job.attempts >= MAX_ATTEMPTS) await deps.exports.finish(job, 'failed', isoNow(deps.clock));
      continue;
    }
    if (await deps.exports.finish(job, 'ready', isoNow(deps.clock))) {
      built++;
      await deps.events?.emit(job.userId, 'export.ready', { exportId: job.id });
    }
    // The job went meanwhile (the user was erased): its ZIP goes too.
    else await deps.storage.deleteKeys([exportZipKey(job.userId, job.id)]);
  }
  return built;
}

/** The ZIP of the user's data, streamed into exports/<userId>/<exportId>.zip. */
async function writeArchive(deps: AccountExportDeps, job: ExportJob): Promise<void> {
  const sink = new MultipartSink(deps.s3, {
    bucket: deps.storage.bucket,
    key: exportZipKey(job.userId, job.id),
    contentType: 'application/zip',
  });
  try {
    const zip = new ZipWriter(sink.write);
    await writeEntries(deps, job, zip);
    await zip.finish();
    await sink.complete();
  } catch (err) {
    await sink.abort();
    throw err;
  }
}

/**
 * The archive's entries: chats/<chatId>.json (the chat and every message of its tree, feedback
 * and citations included) and chats/<chatId>.md (its active branch, as GET /chat/{chatId}/export
 * writes it), files.json and files/<fileId>.pdf (the original, while the bucket still has it),
 * orders.json, collections.json (each collection with its fileIds).
 */
async function writeEntries(deps: AccountExportDeps, job: ExportJob, zip: ZipWriter): Promise<void> {
  const { userId } = job;
  const exportedAt = isoNow(deps.clock);
  for await (const chatId of userListIds(deps.db, deps.table, userId, 'CHAT')) {
    const chat = await deps.chats.getOwned(chatId, userId).catch(skipGone);
    if (!chat) continue;
    await zip.add(`chats/${chatId}.json`, chatDocument(deps, chat, exportedAt));
    const markdown = await exportChat(deps, { userId, chatId, format: 'markdown' }).catch(skipGone);
    if (markdown) await zip.add(`chats/${chatId}.md`, markdown.body);
  }

  /** `name`: a JSON array of what `read` gives for each of the user's items of `kind` (undefined: left out). */
  const addList = (name: string, kind: UserListKind, read: (id: string) => Promise<unknown>) =>
    zip.add(
      name,
      jsonArray(
        (async function* () {
          for await (const id of userListIds(deps.db, deps.table, userId, kind)) {
            const item = await read(id);
            if (item !== undefined) yield item;
          }
        })(),
      ),
    );

  const fileIds: string[] = [];
  await addList('files.json', 'FILE', async (fileId) => {
    const record = await deps.files.get(fileId);
    if (!record || record.userId !== userId) return undefined;
    fileIds.push(fileId);
    return { ...toEmbeddingsData(record), size: record.size, createdAt: record.createdAt };
  });
  for (const fileId of fileIds) {
    const original = await deps.storage.stream(uploadKey(userId, fileId));
    if (original) await zip.add(`files/${fileId}.pdf`, original);
  }
  await addList('orders.json', 'ORDER', (orderId) => deps.orders.get(orderId));
  await addList('collections.json', 'COLLECTION', async (collectionId) => {
    const collection = await deps.collections.get(collectionId);
    if (!collection || collection.userId !== userId) return undefined;
    return { ...collection, fileIds: await deps.collections.memberIds(collectionId) };
  });
}

const skipGone = (err: unknown): undefined => {
  if (err instanceof NotFoundError) return undefined;
  throw err;
};

async function* jsonArray(items: AsyncIterable<unknown>): AsyncGenerator<string> {
  yield '[';
  let first = true;
  for await (const item of items) {
    yield `${first ? '' : ','}\n${JSON.stringify(item)}`;
    first = false;
  }
  yield '\n]\n';
}

/** The chat and every message of its tree in sequence order, read a page at a time. */
async function* chatDocument(
  deps: AccountExportDeps,
  chat: Parameters<typeof exportedChat>[0],
  exportedAt: string,
): AsyncGenerator<string> {
  const head = { format: 'account-export-chat/1', exportedAt, chat: exportedChat(chat) };
  yield `${JSON.stringify(head).slice(0, -1)},"messages":[`;
  const sequenceNumbers = (await deps.messages.tree(chat.id)).sequenceNumbers();
  let first = true;
  for (let i = 0; i < sequenceNumbers.length; i += MESSAGE_PAGE) {
    for (const m of await deps.messages.at(chat.id, sequenceNumbers.slice(i, i + MESSAGE_PAGE))) {
      yield `${first ? '' : ','}\n${JSON.stringify(exportedMessage(m))}`;
      first = false;
    }
  }
  yield '\n]}\n';
}
