import type { MessageRepository } from './message-repository.ts';
import type { Message } from './schemas.ts';

// Conversations are trees of messages (docs/DECISIONS.md, Conversations): a branch is the path
// from the root to a leaf. PLACEHOLDER until the message tree lands: every message in sequence order.

/** The messages of a branch of the chat, root to leaf: the chat's active branch, or the one ending at `leafId`. */
export function readBranch(messages: MessageRepository, chatId: string, _leafId?: string): Promise<Message[]> {
  return messages.all(chatId);
}
