import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import type { z } from 'zod/mini';
import { logger } from '../observability/logger.ts';
import { metrics } from '../observability/metrics.ts';
import type { PipelineStageName, StageSettings } from '../files/stages.ts';
import { clientFailure, documentAtFault, PermanentFailure, RetryableFailure, type Failure } from '../files/failures.ts';
import type { PipelineDeps } from './pipeline-deps.ts';
import { isoNow } from '../clock.ts';
import { asError } from '../errors.ts';
import { releaseAfterRunEnded } from './ingest-queue.ts';

// The SQS side of a pipeline stage: partial batch responses (Powertools batch), each body
// validated, and the failure policy in one place:
//   - a permanent failure (the document is the problem) fails the file and consumes the message;
//   - any other error is reported, so SQS delivers the message again after its visibility
//     timeout; on the last allowed receive (the queue's maxReceiveCount, from the manifest) the
//     file is marked failed with the reason first, then the message goes on to the DLQ, unless
//     the document or its URL is at fault (its server kept answering 503): then it is consumed;
//   - a body that does not validate is reported every time and ends in the DLQ untouched.

interface StageMessage {
  fileId: string;
  runId: string;
}

interface StageContext {
  record: SQSRecord;
  attempt: number;
  lastAttempt: boolean;
  remainingMs: () => number;
  /** The function's memory (MB), from the Lambda context. */
  memoryMb?: number;
}

function failureOf(stage: PipelineStageName, err: unknown, attempts: number): Failure {
  if (err instanceof PermanentFailure || err instanceof RetryableFailure) {
    if (err.reason === 'DOWNLOAD_FAILED') return clientFailure(err);
    const suffix = err instanceof RetryableFailure ? ` (gave up after ${attempts} attempts)` : '';
    return { reason: err.reason, message: `${err.message}${suffix}` };
  }
  // An internal error (storage, queue, a message naming a missing object): its text stays in
  // the logs, the client gets a plain message.
  return { reason: 'PROCESSING_FAILED', message: `Processing failed in ${stage} after ${attempts} attempts` };
}

/** Fails the run; when that ended it, its owner's waiting runs get its slot. True when it failed the run. */
async function failRun(deps: PipelineDeps, msg: StageMessage, failure: Failure): Promise<boolean> {
  const failed = await deps.files.fail(msg.fileId, msg.runId, failure, isoNow(deps.clock));
  if (failed) {
    const record = await deps.files.get(msg.fileId);
    if (record) {
      await releaseAfterRunEnded(deps.releaseWaiting, record.userId, { fileId: msg.fileId, runId: msg.runId });
      await deps.events?.emit(record.userId, 'file.failed', { fileId: msg.fileId, fileName: record.fileName, failure });
    }
  }
  return failed;
}

export function stageHandler<S extends z.ZodMiniType<StageMessage>>(
  settings: StageSettings,
  schema: S,
  deps: PipelineDeps,
  work: (deps: PipelineDeps, msg: z.infer<S>, ctx: StageContext) => Promise<void>,
) {
  const { name: stage, maxReceiveCount } = settings;

  const handleRecord = async (record: SQSRecord, context?: Context): Promise<void> => {
    let body: unknown;
    try {
      body = JSON.parse(record.body);
    } catch {
      body = undefined;
    }
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      logger.error('invalid pipeline message', { stage, messageId: record.messageId, issues: parsed.error.issues });
      throw new Error('Invalid message body');
    }
    const msg = parsed.data as z.infer<S> & StageMessage;
    const attempt = Number(record.attributes.ApproximateReceiveCount ?? '1') || 1;
    const lastAttempt = attempt >= maxReceiveCount;
    // Keys on each line rather than appended to the shared logger (the local runtime runs
    // several invocations in one process).
    const keys = { stage, fileId: msg.fileId, runId: msg.runId, attempt };
    try {
      await work(deps, msg, {
        record,
        attempt,
        lastAttempt,
        remainingMs: () => context?.getRemainingTimeInMillis() ?? 900_000,
        ...(context?.memoryLimitInMB && { memoryMb: Number(context.memoryLimitInMB) }),
      });
    } catch (err) {
      if (err instanceof PermanentFailure) {
        logger.info('ingestion failed', { ...keys, reason: err.reason, detail: err.message });
        if (await failRun(deps, msg, failureOf(stage, err, attempt))) metrics.ingestionFailed(err.reason);
        return; // consumed: retrying cannot help
      }
      if (lastAttempt) {
        const failure = failureOf(stage, err, attempt);
        if (documentAtFault(failure)) {
          // The URL's server failed every attempt (a 503, a body cut short): the file fails with
          // that typed reason and the message is consumed, not an error of ours for the DLQ.
          logger.info('ingestion failed on its last attempt', {
            ...keys,
            reason: failure.reason,
            cause: failure.cause,
          });
          if (await failRun(deps, msg, failure)) metrics.ingestionFailed(failure.reason);
          return;
        }
        logger.error('ingestion failed on its last attempt', { ...keys, reason: failure.reason, error: asError(err) });
        await failRun(deps, msg, failure).then(
          (failed) => failed && metrics.ingestionFailed(failure.reason),
          (e) => logger.error('could not record the failure', { error: asError(e) }),
        );
      } else {
        logger.warn('stage failed; SQS will retry', { ...keys, error: asError(err) });
      }
      throw err;
    }
  };

  return sqsBatchHandler(handleRecord);
}

/**
 * An SQS consumer that answers with partial batch responses: a record whose handling throws is
 * reported and comes back after its visibility timeout; the others are consumed.
 */
export function sqsBatchHandler(handleRecord: (record: SQSRecord, context: Context) => Promise<void>) {
  return async (event: SQSEvent, context: Context) => {
    logger.addContext(context); // function name, its request id, cold start: in every line
    // A processor per invocation: it holds the batch's state (the local runtime runs several at once).
    const processor = new BatchProcessor(EventType.SQS);
    return processPartialResponse(event, handleRecord, processor, { context, throwOnFullBatchFailure: false });
  };
}
