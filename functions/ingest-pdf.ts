import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { dynamo, sqsClient, tableName } from '#shared/clients.ts';
import { ChatRepository } from '#shared/chats/chat-repository.ts';
import { MessageRepository } from '#shared/chats/message-repository.ts';
import { AttachmentRepository } from '#shared/files/attachment-repository.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import { ingestPdf, probePolicy, syncWaitMs, type IngestDeps } from '#shared/pdf/ingest-service.ts';
import { ingestPdfBody } from '#shared/files/schemas.ts';
import { stageQueues } from '#shared/pdf/queue.ts';
import { limitSettings, UserLimits } from '#shared/limits/user-limits.ts';
import { UsageCounters } from '#shared/limits/usage-counters.ts';

// POST /message/pdf: check the URL and its size, start the pipeline, wait a while for it.
const settings = config();
const deps: IngestDeps = {
  files: new FileRepository(dynamo(), tableName()),
  attachments: new AttachmentRepository(dynamo(), tableName()),
  chats: new ChatRepository(dynamo(), tableName()),
  messages: new MessageRepository(dynamo(), tableName()),
  queues: stageQueues(sqsClient(), settings),
  budget: new UserLimits(new UsageCounters(dynamo(), tableName()), limitSettings(settings), systemClock),
  clock: systemClock,
  policy: probePolicy(settings),
};

export const handler = httpHandler(
  httpRoutes['ingest-pdf'],
  { body: ingestPdfBody },
  async ({ body, user, context }) => {
    const { completed, embeddingsData } = await ingestPdf(deps, user.id, body, {
      waitMs: syncWaitMs(settings.PDF_SYNC_WAIT_MS, context.getRemainingTimeInMillis?.()),
      maxInFlightPerUser: settings.PDF_MAX_IN_FLIGHT_PER_USER,
    });
    return completed
      ? { statusCode: 200, message: 'PDF ingested', data: { embeddingsData } }
      : { statusCode: 202, message: 'PDF ingestion in progress', data: { embeddingsData } };
  },
);
