import { MessageRepository } from '#shared/chats/conversations/message-repository.ts';
import type { Message } from '#shared/chats/schemas.ts';
import type { TestApp } from './app.ts';

/**
 * Every message stored in a chat, on every branch, in sequence order, read from the table
 * (GET …/messages shows one branch: prompts sent at once follow one another, so their replies
 * may end different branches).
 */
export function storedMessages(app: TestApp, chatId: string): Promise<Message[]> {
  return new MessageRepository(app.clients().db, app.tableName).all(chatId);
}
