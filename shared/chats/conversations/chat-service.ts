import type { z } from 'zod/mini';
import { isoNow, type Clock } from '../../clock.ts';
import { InvalidInputError } from '../../errors.ts';
import type { Page } from '../../dynamo.ts';
import type { ChatFilesDeps } from '../../files/chat-files.ts';
import type { CollectionRepository } from '../../collections/collection-repository.ts';
import { filesOfChat } from './chat-files-of.ts';
import { toEmbeddingsData } from '../../files/file-view.ts';
import type { ChatRepository } from './chat-repository.ts';
import { branchThrough, leafToRead } from './branch.ts';
import type { BranchMessage, MessageRepository } from './message-repository.ts';
import type { UsageLedger } from '../../limits/usage-ledger.ts';
import type { Chat, createChatBody, updateChatBody } from '../schemas.ts';

// A user's chats: create, read (with the files attached), list, change, delete, and read a
// chat's messages. Every call names the caller; a chat of anyone else is 404 (getOwned).

interface ChatDeps {
  chats: ChatRepository;
  /** A chat bound to a collection checks it is the caller's; absent: no collection can be named. */
  collections?: CollectionRepository;
  /** The owner's usage counters (chats); absent: not counted. */
  usage?: Pick<UsageLedger, 'addTotals'>;
  clock: Clock;
}

interface ChatReadDeps extends Pick<ChatDeps, 'chats'> {
  messages: MessageRepository;
  files: ChatFilesDeps & { collections?: CollectionRepository };
}

interface Caller {
  userId: string;
}
interface OfChat extends Caller {
  chatId: string;
}
interface PageQuery {
  limit: number;
  cursor?: string;
}

/**
 * Creates the chat (bound to a collection of the caller's, when it names one: anyone else's is
 * not found), then counts it in the owner's usage (docs/DECISIONS.md "Usage counters").
 */
export async function createChat(deps: ChatDeps, input: Caller & { chat: z.infer<typeof createChatBody> }) {
  if (input.chat.collectionId !== undefined) {
    if (!deps.collections) throw new Error('createChat needs the collections to bind a chat to one');
    // Owned first: anyone else's collection is not found, whatever else the body says (no existence oracle).
    await deps.collections.getOwned(input.chat.collectionId, input.userId);
    if (input.chat.type !== 'file')
      throw new InvalidInputError('Only a chat of type file can be bound to a collection', [
        { path: 'body.collectionId', message: 'The chat is not of type file' },
      ]);
  }
  const chat = await deps.chats.create(input.userId, input.chat, isoNow(deps.clock));
  await deps.usage?.addTotals(input.userId, { chats: 1 });
  return chat;
}

/** The chat with its files: those attached to it, or a collection chat's (the collection's as it is now). */
export async function getChat(deps: Pick<ChatReadDeps, 'chats' | 'files'>, input: OfChat) {
  const chat = await deps.chats.getOwned(input.chatId, input.userId);
  return { ...chat, files: (await filesOfChat(deps.files, chat)).map(toEmbeddingsData) };
}

export const listChats = (deps: Pick<ChatDeps, 'chats'>, input: Caller & PageQuery): Promise<Page<Chat>> =>
  deps.chats.listByUser(input.userId, input);

/**
 * `chatName` (the field the responses use) is the same as `name`. `activeLeafId` chooses the
 * branch through that message, to the newest message under it (400 when it is not the chat's).
 */
export async function updateChat(
  deps: ChatDeps & Pick<ChatReadDeps, 'messages'>,
  input: OfChat & { changes: z.infer<typeof updateChatBody> },
) {
  const { chatName, activeLeafId, ...changes } = input.changes;
  let leaf: string | undefined;
  if (activeLeafId !== undefined) {
    await deps.chats.getOwned(input.chatId, input.userId); // a stranger's chat is 404, not 400
    leaf = branchThrough(await deps.messages.tree(input.chatId), activeLeafId, 'body.activeLeafId');
  }
  return deps.chats.update(
    input.chatId,
    input.userId,
    { ...changes, name: changes.name ?? chatName, ...(leaf && { activeLeafId: leaf }) },
    isoNow(deps.clock),
  );
}

/** The chat with every message and attachment in its partition. */
/** Deletes the chat; only the attempt that removed its item uncounts it (a retried delete does not). */
export async function deleteChat(deps: Pick<ChatDeps, 'chats' | 'usage'>, input: OfChat): Promise<void> {
  const { uncount } = await deps.chats.delete(input.chatId, input.userId);
  if (uncount) await deps.usage?.addTotals(input.userId, { chats: -1 });
}

/** A branch of one of the caller's chats, root first, paged: the active one, or the one through `leaf`. */
export async function listMessages(
  deps: Pick<ChatReadDeps, 'chats' | 'messages'>,
  input: OfChat & PageQuery & { leaf?: string },
): Promise<Page<BranchMessage>> {
  const chat = await deps.chats.getOwned(input.chatId, input.userId); // a stranger's chat is 404
  const tree = await deps.messages.tree(chat.id);
  return deps.messages.branchPage(chat.id, tree, leafToRead(tree, chat.activeLeafId, input.leaf), input);
}
