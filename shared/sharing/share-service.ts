import { randomBytes } from 'node:crypto';
import { isoNow, type Clock } from '../clock.ts';
import { readBranch } from '../chats/conversations/branch.ts';
import type { ChatRepository } from '../chats/conversations/chat-repository.ts';
import type { MessageRepository } from '../chats/conversations/message-repository.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import type { ShareRepository } from './share-repository.ts';
import {
  citedFileIds,
  sharedMessages,
  shownMessages,
  withoutDeletedFiles,
  type SharedMessage,
} from './share-snapshot.ts';

// Sharing a chat (docs/DECISIONS.md, Export and share): a read-only snapshot of its active branch
// as it is when shared, readable by anyone with the link and no sign-in. One live share per chat:
// sharing again replaces the snapshot under a new id (the old link stops working); revoking or
// deleting the chat ends it. A cited file that is deleted (DELETE /upload, DELETE /me, retention)
// is no longer shown: each read checks the files the snapshot cites, so every way a file goes is
// covered and no share has to be found when it goes.

/** What a share needs of the files it cites: which of them are gone or being deleted. */
export interface CitedFiles {
  deletedAmong(ids: string[]): Promise<Set<string>>;
}

interface ShareDeps {
  chats: ChatRepository;
  messages: MessageRepository;
  shares: ShareRepository;
  files: CitedFiles;
  clock: Clock;
  /** The largest snapshot, its messages' JSON in bytes (SHARE_MAX_BYTES). */
  maxBytes: number;
}

/** 16 random bytes (128 bits) as base64url: 22 characters. */
const SHARE_ID_BYTES = 16;
const SHARE_ID = /^[A-Za-z0-9_-]{22}$/;

const shareNotFound = () => new NotFoundError('Shared chat not found');

/** The messages without what they show of cited files that are gone (one batch of consistent reads). */
async function withoutGoneFiles(files: CitedFiles, messages: SharedMessage[]): Promise<SharedMessage[]> {
  const cited = citedFileIds(messages);
  return cited.length ? withoutDeletedFiles(messages, await files.deletedAmong(cited)) : messages;
}

/**
 * Shares the caller's chat; the new share's id and link.
 * Steps: the chat (a stranger's is not found) → its active branch, as a share shows it, without
 * what it cites of files already deleted (too large: refused) → store it under a fresh id, replacing the chat's previous share → re-read the chat: if
 * a delete began meanwhile, remove the share again, so a deleted chat leaves no share behind.
 */
export async function shareChat(deps: ShareDeps, input: { userId: string; chatId: string; baseUrl: string }) {
  const chat = await deps.chats.getOwned(input.chatId, input.userId);
  const messages = await withoutGoneFiles(deps.files, sharedMessages(await readBranch(deps.messages, chat.id)));
  const bytes = Buffer.byteLength(JSON.stringify(messages));
  if (bytes > deps.maxBytes) {
    throw new ConflictError(
      `This chat is too long to share (${bytes} bytes of messages, at most ${deps.maxBytes}); export it instead`,
      'SHARE_TOO_LARGE',
    );
  }
  const head = {
    chatId: chat.id,
    shareId: randomBytes(SHARE_ID_BYTES).toString('base64url'),
    chatName: chat.chatName,
    sharedAt: isoNow(deps.clock),
  };
  const { stored } = await deps.shares.put(head, messages);
  if (!(await deps.chats.get(chat.id))) {
    await deps.shares.removeShare(stored);
    throw new NotFoundError('Chat not found');
  }
  return { shareId: head.shareId, url: `${input.baseUrl.replace(/\/+$/, '')}/shared/${head.shareId}` };
}

/** Ends the caller's chat's share; not found when the chat is not theirs or is not shared. */
export async function revokeShare(
  deps: Pick<ShareDeps, 'chats' | 'shares'>,
  input: { userId: string; chatId: string },
) {
  const chat = await deps.chats.getOwned(input.chatId, input.userId);
  const removed = await deps.shares.remove(chat.id);
  if (!removed) throw new NotFoundError('This chat is not shared');
  return { shareId: removed.shareId, revoked: true as const };
}

/**
 * A shared chat, for anyone with its id. An id this service could not have issued is not found
 * without a read (as a revoked one is), so probing learns nothing from the answer.
 * Steps: the share → its cited files that were deleted since it was made lose their name, page and
 * quote (a marker says so) → no file ids shown.
 */
export async function readSharedChat(deps: Pick<ShareDeps, 'shares' | 'files'>, input: { shareId: string }) {
  if (!SHARE_ID.test(input.shareId)) throw shareNotFound();
  const found = await deps.shares.find(input.shareId);
  if (!found) throw shareNotFound();
  const { head } = found;
  const messages = shownMessages(await withoutGoneFiles(deps.files, found.messages));
  return { shareId: head.shareId, chatName: head.chatName, sharedAt: head.sharedAt, messages };
}
