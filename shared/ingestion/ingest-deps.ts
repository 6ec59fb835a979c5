import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { dynamo, sqsClient, tableName } from '../clients.ts';
import { ChatRepository } from '../chats/conversations/chat-repository.ts';
import { MessageRepository } from '../chats/conversations/message-repository.ts';
import { CollectionRepository } from '../collections/collection-repository.ts';
import { collectionSettings } from '../collections/collection-service.ts';
import { AttachmentRepository } from '../files/attachment-repository.ts';
import { FileRepository } from '../files/file-repository.ts';
import { userLimits } from '../limits/user-limits.ts';
import { WaitingQueue } from '../limits/waiting-queue.ts';
import { ingestSettings, type IngestDeps } from './ingest-service.ts';
import { stageQueues } from './stage-queues.ts';

/** What POST /message/pdf works with, composed at its cold start. */
export function ingestDeps(settings: Config, clock: Clock): IngestDeps {
  const files = new FileRepository(dynamo(), tableName());
  return {
    files,
    attachments: new AttachmentRepository(dynamo(), tableName()),
    chats: new ChatRepository(dynamo(), tableName()),
    messages: new MessageRepository(dynamo(), tableName()),
    queues: stageQueues(sqsClient(), settings),
    limits: userLimits(dynamo(), settings, clock),
    waiting: new WaitingQueue(dynamo(), tableName()),
    settings: ingestSettings(settings),
    clock,
    collections: {
      collections: new CollectionRepository(dynamo(), tableName()),
      files,
      settings: collectionSettings(settings),
    },
  };
}
