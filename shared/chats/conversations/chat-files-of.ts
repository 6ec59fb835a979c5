import type { CollectionRepository } from '../../collections/collection-repository.ts';
import { chatFiles, type ChatFilesDeps } from '../../files/chat-files.ts';
import type { FileRecord } from '../../files/file-record.ts';

// The files a file chat answers from: those attached to it, or, for a chat bound to a collection,
// the collection's as they are now (a file added after the chat was made is in, one taken out is
// not; a deleted collection leaves none).

export interface ChatScopeDeps extends ChatFilesDeps {
  collections?: CollectionRepository;
}

/** The ids of a collection chat's files now; undefined for a chat that answers from its attachments. */
export async function collectionFileIds(
  deps: ChatScopeDeps,
  chat: { collectionId?: string | undefined },
): Promise<string[] | undefined> {
  if (chat.collectionId === undefined) return undefined;
  if (!deps.collections) throw new Error('A collection chat needs the collections');
  const collection = await deps.collections.get(chat.collectionId);
  return collection ? deps.collections.memberIds(collection.id) : [];
}

/** The chat's files with their current records; files deleted meanwhile are left out. */
export async function filesOfChat(
  deps: ChatScopeDeps,
  chat: { id: string; collectionId?: string | undefined },
): Promise<FileRecord[]> {
  const ids = await collectionFileIds(deps, chat);
  if (ids === undefined) return chatFiles(deps, chat.id);
  return ids.length ? deps.files.getMany(ids) : [];
}
