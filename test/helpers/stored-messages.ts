import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '#infra/local/emulators.ts';
import { MessageRepository } from '#shared/chats/message-repository.ts';
import type { Message } from '#shared/chats/schemas.ts';
import type { TestApp } from './app.ts';

/**
 * Every message stored in a chat, on every branch, in sequence order, read from the table
 * (GET …/messages shows one branch: prompts sent at once follow one another, so their replies
 * may end different branches).
 */
export function storedMessages(app: TestApp, chatId: string): Promise<Message[]> {
  const db = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: app.endpoints.dynamodb, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS }),
  );
  return new MessageRepository(db, app.tableName).all(chatId);
}
