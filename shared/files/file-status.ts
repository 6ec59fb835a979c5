import type { Page } from '../dynamo.ts';
import { NotFoundError } from '../errors.ts';
import type { FileRepository } from './file-repository.ts';
import { isDeletedFile, type FileRecord } from './file-record.ts';
import { toEmbeddingsData } from './file-view.ts';
import type { EmbeddingsData } from './schemas.ts';
import { INGESTION_QUEUE, type WaitingQueue } from '../limits/waiting-queue.ts';

// Reading a user's files as the API shows them (`embeddingsData`): one, or a page of all.

interface FileStatusDeps {
  files: FileRepository;
  /** The owners' queues of waiting ingestions (a queued file's place); absent: the place is not said. */
  waiting?: WaitingQueue;
}

export const fileNotFound = () => new NotFoundError('File not found');

/** The caller's file; a file of anyone else, or one being deleted, is not found. */
export async function ownedFile(deps: FileStatusDeps, input: { userId: string; fileId: string }): Promise<FileRecord> {
  const record = await deps.files.get(input.fileId);
  if (!record || record.userId !== input.userId || isDeletedFile(record)) throw fileNotFound();
  return record;
}

/** GET /message/pdf/{fileId}: where the caller's file stands. */
export async function fileStatus(deps: FileStatusDeps, input: { userId: string; fileId: string }) {
  const record = await ownedFile(deps, input);
  return { embeddingsData: toEmbeddingsData(record, await queuePlace(deps, record)) };
}

/** A queued run's place in its owner's queue (1: next); undefined when it does not wait. */
export async function queuePlace(deps: FileStatusDeps, record: FileRecord): Promise<number | undefined> {
  if (!deps.waiting || record.status !== 'processing' || !record.queuedAt) return undefined;
  return deps.waiting.count(record.userId, INGESTION_QUEUE, {
    upTo: 10_000,
    before: { queuedAt: record.queuedAt, id: record.id },
  });
}

/** GET /upload: the caller's files, newest first, paged. */
export async function listFiles(
  deps: FileStatusDeps,
  input: { userId: string; limit: number; cursor?: string },
): Promise<Page<EmbeddingsData>> {
  const page = await deps.files.listByUser(input.userId, input);
  return { ...page, items: page.items.map(toEmbeddingsData) };
}
