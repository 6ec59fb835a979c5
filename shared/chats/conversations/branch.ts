import { InvalidInputError } from '../../errors.ts';
import type { MessageRepository } from './message-repository.ts';
import type { MessageTree } from './message-tree.ts';
import type { Message } from '../schemas.ts';

// Branches of a chat's message tree (message-tree.ts): what reads a whole branch, and how a
// message named in a request chooses one.

/** A message a request names (a parent, a branch to show) is not in the chat. */
export const notInChat = (path: string) =>
  new InvalidInputError('No message with this id in this chat', [{ path, message: 'Not a message of this chat' }]);

/** The leaf of the branch through `messageId`: the newest message under it. */
export function branchThrough(tree: MessageTree, messageId: string, path: string): string {
  if (!tree.get(messageId)) throw notInChat(path);
  return tree.newestUnder(messageId);
}

/** The leaf of the branch a read asks for: the one through `leafId` (`?leaf=`), else the active one. */
export const leafToRead = (tree: MessageTree, activeLeafId: string | undefined, leafId: string | undefined) =>
  leafId ? branchThrough(tree, leafId, 'query.leaf') : tree.activeLeaf(activeLeafId);

/** Every message of a branch of the chat, root to leaf: the active branch, or the one through `leafId`. */
export async function readBranch(messages: MessageRepository, chatId: string, leafId?: string): Promise<Message[]> {
  const tree = await messages.tree(chatId);
  const leaf = leafToRead(tree, leafId ? undefined : await messages.activeLeafId(chatId), leafId);
  const out: Message[] = [];
  for await (const message of messages.branchNewestFirst(chatId, tree, leaf ?? null, 100)) out.push(message);
  return out.reverse();
}
