import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { dynamo, sqsClient, tableName } from '#shared/clients.ts';
import { ChatRepository } from '#shared/chats/chat-repository.ts';
import { MessageRepository } from '#shared/chats/message-repository.ts';
import { AttachmentRepository } from '#shared/files/attachment-repository.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import { ingestPdf, ingestSettings, type IngestDeps } from '#shared/pdf/ingest-service.ts';
import { ingestPdfBody } from '#shared/files/schemas.ts';
import { stageQueues } from '#shared/pdf/queue.ts';
import { userLimits } from '#shared/limits/user-limits.ts';
import { WaitingQueue } from '#shared/limits/waiting-queue.ts';

// POST /message/pdf: check the URL and its size, start the pipeline (or queue), wait a while for it.
const settings = config();
const deps: IngestDeps = {
  files: new FileRepository(dynamo(), tableName()),
  attachments: new AttachmentRepository(dynamo(), tableName()),
  chats: new ChatRepository(dynamo(), tableName()),
  messages: new MessageRepository(dynamo(), tableName()),
  queues: stageQueues(sqsClient(), settings),
  limits: userLimits(dynamo(), settings, systemClock),
  waiting: new WaitingQueue(dynamo(), tableName()),
  settings: ingestSettings(settings),
  clock: systemClock,
};

export const handler = httpHandler(
  httpRoutes['ingest-pdf'],
  { body: ingestPdfBody },
  async ({ body, user, context }) => {
    const remainingMs = context.getRemainingTimeInMillis?.();
    const { completed, embeddingsData } = await ingestPdf(deps, { userId: user.id, body, remainingMs });
    return completed
      ? { statusCode: 200, message: 'PDF ingested', data: { embeddingsData } }
      : { statusCode: 202, message: 'PDF ingestion in progress', data: { embeddingsData } };
  },
);
