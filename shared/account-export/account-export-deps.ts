import type { S3Client } from '@aws-sdk/client-s3';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ChatRepository } from '../chats/conversations/chat-repository.ts';
import { MessageRepository } from '../chats/conversations/message-repository.ts';
import { bucketName, dynamo, tableName } from '../clients.ts';
import type { Clock } from '../clock.ts';
import { CollectionRepository } from '../collections/collection-repository.ts';
import { FileRepository } from '../files/file-repository.ts';
import { FileStorage } from '../files/storage.ts';
import { OrderRepository } from '../orders/order-repository.ts';
import { s3Client } from '../s3-client.ts';
import type { AccountExportDeps } from './account-export.ts';
import { ExportRepository } from './export-repository.ts';

/** What the export routes and the build work with, over these clients. */
export function accountExportDepsOf(
  clients: { db: DynamoDBDocumentClient; s3: S3Client; table: string; bucket: string },
  clock: Clock,
): AccountExportDeps {
  const { db, s3, table, bucket } = clients;
  return {
    db,
    table,
    exports: new ExportRepository(db, table),
    chats: new ChatRepository(db, table),
    messages: new MessageRepository(db, table),
    files: new FileRepository(db, table),
    orders: new OrderRepository(db, table),
    collections: new CollectionRepository(db, table),
    storage: new FileStorage(s3, bucket),
    s3,
    clock,
  };
}

/** The same, composed at a cold start. */
export const accountExportDeps = (clock: Clock): AccountExportDeps =>
  accountExportDepsOf({ db: dynamo(), s3: s3Client(), table: tableName(), bucket: bucketName() }, clock);
