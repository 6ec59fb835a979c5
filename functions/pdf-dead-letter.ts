import '#shared/config/webhooks.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import { recordDeadLetter, type DeadLetterDeps } from '#shared/ingestion/dead-letter.ts';
import { sqsBatchHandler } from '#shared/ingestion/stage-handler.ts';
import { ingestQueueDeps } from '#shared/ingestion/pipeline-deps.ts';
import { releaseWaiting } from '#shared/ingestion/ingest-queue.ts';
import { queuedEvents } from '#shared/events/service-events.ts';
import { sqsClient } from '#shared/clients.ts';

// pdf-dead-letter (SQS, every pipeline DLQ): a file whose stage died on every attempt is marked
// failed (PROCESSING_FAILED and the stage); a write that fails is retried by SQS.

const queues = ingestQueueDeps(config(), systemClock);
const deps: DeadLetterDeps = {
  files: new FileRepository(dynamo(), tableName()),
  clock: systemClock,
  releaseWaiting: (userId, ended) => releaseWaiting(queues, userId, ended),
  events: queuedEvents(sqsClient(), config().WEBHOOK_QUEUE_URL),
};

export const handler = sqsBatchHandler(async (record) => void (await recordDeadLetter(deps, record.body)));
