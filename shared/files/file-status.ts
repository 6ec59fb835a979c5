import type { Page } from '../dynamo.ts';
import { NotFoundError } from '../errors.ts';
import { isDeletedFile, type FileRecord, type FileRepository } from './file-repository.ts';
import { toEmbeddingsData } from './file-view.ts';
import type { EmbeddingsData } from './schemas.ts';

// Reading a user's files as the API shows them (`embeddingsData`): one, or a page of all.

interface FileStatusDeps {
  files: FileRepository;
}

export const fileNotFound = () => new NotFoundError('File not found');

/** The caller's file; a file of anyone else, or one being deleted, is not found. */
export async function ownedFile(deps: FileStatusDeps, input: { userId: string; fileId: string }): Promise<FileRecord> {
  const record = await deps.files.get(input.fileId);
  if (!record || record.userId !== input.userId || isDeletedFile(record)) throw fileNotFound();
  return record;
}

/** GET /message/pdf/{fileId}: where the caller's file stands. */
export const fileStatus = async (deps: FileStatusDeps, input: { userId: string; fileId: string }) => ({
  embeddingsData: toEmbeddingsData(await ownedFile(deps, input)),
});

/** GET /upload: the caller's files, newest first, paged. */
export async function listFiles(
  deps: FileStatusDeps,
  input: { userId: string; limit: number; cursor?: string },
): Promise<Page<EmbeddingsData>> {
  const page = await deps.files.listByUser(input.userId, input);
  return { ...page, items: page.items.map(toEmbeddingsData) };
}
