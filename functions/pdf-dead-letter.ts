import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { dynamo, tableName } from '#shared/clients.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { logger } from '#shared/logger.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import { recordDeadLetter, type DeadLetterDeps } from '#shared/pdf/dead-letter.ts';

// pdf-dead-letter (SQS, every pipeline DLQ): a file whose stage died on every attempt is marked
// failed (PROCESSING_FAILED and the stage); a write that fails is retried by SQS.
config();
const deps: DeadLetterDeps = { files: new FileRepository(dynamo(), tableName()), clock: systemClock };

export const handler = async (event: SQSEvent, context: Context) => {
  logger.addContext(context); // function name, its request id, cold start: in every line
  return processPartialResponse(
    event,
    async (record: SQSRecord) => void (await recordDeadLetter(deps, record.body)),
    new BatchProcessor(EventType.SQS),
    {
      context,
      throwOnFullBatchFailure: false,
    },
  );
};
