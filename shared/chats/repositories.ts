import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ChatRepository } from './chat-repository.ts';
import { MessageRepository } from './message-repository.ts';
import { ReplyRepository } from './reply-repository.ts';

/** The chat partition's repositories over one table. */
export const chatRepositories = (db: DynamoDBDocumentClient, table: string) => ({
  chats: new ChatRepository(db, table),
  messages: new MessageRepository(db, table),
  replies: new ReplyRepository(db, table),
});
