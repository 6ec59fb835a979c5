import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ChatRepository } from './conversations/chat-repository.ts';
import { MessageRepository } from './conversations/message-repository.ts';
import { ReplyRepository } from './replies/reply-repository.ts';

/** The chat partition's repositories over one table. */
export const chatRepositories = (db: DynamoDBDocumentClient, table: string) => ({
  chats: new ChatRepository(db, table),
  messages: new MessageRepository(db, table),
  replies: new ReplyRepository(db, table),
});
