import '../config/collections.ts';
import { isoNow, type Clock } from '../clock.ts';
import type { Page } from '../dynamo.ts';
import type { FileRepository } from '../files/file-repository.ts';
import { fileNotFound, ownedFile } from '../files/file-status.ts';
import { NotFoundError } from '../errors.ts';
import { toEmbeddingsData } from '../files/file-view.ts';
import type { Collection, CollectionRepository } from './collection-repository.ts';

// A user's collections of files (docs/DECISIONS.md "Collections"): create, list, read, rename,
// delete (the files stay), put a file in or take it out, list a collection's files. Every call
// names the caller; anyone else's collection or file is not found, as on the other routes.

export interface CollectionDeps {
  collections: CollectionRepository;
  files: FileRepository;
  clock: Clock;
  settings: CollectionSettings;
}

export interface CollectionSettings {
  maxPerUser: number;
  maxFiles: number;
}

export const collectionSettings = (config: {
  COLLECTIONS_MAX_PER_USER: number;
  COLLECTION_MAX_FILES: number;
}): CollectionSettings => ({ maxPerUser: config.COLLECTIONS_MAX_PER_USER, maxFiles: config.COLLECTION_MAX_FILES });

interface Caller {
  userId: string;
}
interface OfCollection extends Caller {
  collectionId: string;
}
interface PageQuery {
  limit: number;
  cursor?: string | undefined;
}

export const createCollection = (
  deps: Pick<CollectionDeps, 'collections' | 'clock' | 'settings'>,
  input: Caller & { name: string },
): Promise<Collection> =>
  deps.collections.create(input.userId, input.name, isoNow(deps.clock), deps.settings.maxPerUser);

export const listCollections = (
  deps: Pick<CollectionDeps, 'collections'>,
  input: Caller & PageQuery,
): Promise<Page<Collection>> => deps.collections.listByUser(input.userId, input);

export const getCollection = (deps: Pick<CollectionDeps, 'collections'>, input: OfCollection): Promise<Collection> =>
  deps.collections.getOwned(input.collectionId, input.userId);

export const renameCollection = (
  deps: Pick<CollectionDeps, 'collections' | 'clock'>,
  input: OfCollection & { name: string },
): Promise<Collection> => deps.collections.rename(input.collectionId, input.userId, input.name, isoNow(deps.clock));

/**
 * Steps: mark it (reads stop seeing it) → take each of its files out (their records forget it;
 * the files stay) → delete its memberships and item. A failed delete can be retried: the mark
 * stays and the next attempt goes on.
 */
export async function deleteCollection(
  deps: Pick<CollectionDeps, 'collections' | 'files'>,
  input: OfCollection,
): Promise<void> {
  await deps.collections.markDeleting(input.collectionId, input.userId);
  for (const fileId of await deps.collections.memberIds(input.collectionId))
    await deps.files.removeCollection(fileId, input.collectionId);
  await deps.collections.deleteMarked(input.collectionId, input.userId);
}

/**
 * Puts the caller's file in the caller's collection (any status: it is searched once completed).
 * Steps: both owned → the membership (counted against COLLECTION_MAX_FILES) → the file record
 * notes the collection (a file deleted meanwhile: the membership goes again, not found).
 * True when added, false when it was in already.
 */
export async function addFileToCollection(
  deps: Pick<CollectionDeps, 'collections' | 'files' | 'clock' | 'settings'>,
  input: OfCollection & { fileId: string },
): Promise<boolean> {
  const collection = await deps.collections.getOwned(input.collectionId, input.userId);
  await ownedFile(deps, input);
  const added = await deps.collections.addMember(collection, input.fileId, isoNow(deps.clock), deps.settings.maxFiles);
  if (!(await deps.files.addCollection(input.fileId, collection.id))) {
    await deps.collections.removeMember(collection.id, input.fileId);
    throw fileNotFound();
  }
  return added;
}

/** Takes the file out of the caller's collection (the file stays); not in it: not found. */
export async function removeFileFromCollection(
  deps: Pick<CollectionDeps, 'collections' | 'files'>,
  input: OfCollection & { fileId: string },
): Promise<void> {
  await deps.collections.getOwned(input.collectionId, input.userId);
  if (!(await deps.collections.removeMember(input.collectionId, input.fileId)))
    throw new NotFoundError('The file is not in this collection');
  await deps.files.removeCollection(input.fileId, input.collectionId);
}

/** One page of the collection's files with their status (by file id); files deleted meanwhile are left out. */
export async function listCollectionFiles(
  deps: Pick<CollectionDeps, 'collections' | 'files'>,
  input: OfCollection & PageQuery,
) {
  await deps.collections.getOwned(input.collectionId, input.userId);
  const page = await deps.collections.listMembers(input.collectionId, input);
  const byId = new Map((await deps.files.getMany(page.items.map((m) => m.fileId))).map((f) => [f.id, f]));
  const items = page.items.flatMap((m) => {
    const file = byId.get(m.fileId);
    return file ? [{ ...toEmbeddingsData(file), addedAt: m.addedAt }] : [];
  });
  return { items, lastKey: page.lastKey };
}
