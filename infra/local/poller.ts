import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { inProcessInvoker, type Invoker } from './invoker.ts';

// The local stand-in for a Lambda SQS event source mapping: receives batches, hands the
// function a real SQS event, deletes what succeeded and leaves failed messages to reappear
// after the visibility timeout; the queue's redrive policy moves them to the DLQ.

interface PollerOptions {
  name: string;
  sqs: SQSClient;
  queueUrl: string;
  queueArn: string;
  batchSize: number;
  concurrency: number;
  timeoutSeconds: number;
  memoryMb: number;
  /** Delay before a failed message is visible again (seconds); the queue default when unset. */
  retryDelaySeconds?: number;
  /** Runs the stage's function (the runtime's isolated instances); or a handler of this process from loadHandler. */
  invoker?: Invoker;
  /** The function's entry file (with invoker). */
  entry?: string;
  loadHandler?: () => Promise<unknown>;
  onError?: (err: unknown) => void;
}

export interface Poller {
  stop(): Promise<void>;
}

function toRecord(m: Message, queueArn: string): SQSRecord {
  const attrs = m.Attributes ?? {};
  return {
    messageId: m.MessageId!,
    receiptHandle: m.ReceiptHandle!,
    body: m.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attrs.ApproximateReceiveCount ?? '1',
      SentTimestamp: attrs.SentTimestamp ?? String(Date.now()),
      SenderId: attrs.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attrs.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: Object.fromEntries(
      Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [
        k,
        { stringValue: v.StringValue, dataType: v.DataType ?? 'String', stringListValues: [], binaryListValues: [] },
      ]),
    ),
    md5OfBody: m.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: 'us-east-1',
  };
}

export function startPoller(options: PollerOptions): Poller {
  if (!options.invoker && !options.loadHandler) throw new Error('startPoller needs an invoker or a loadHandler');
  const invoker = options.invoker ?? inProcessInvoker(() => options.loadHandler!());
  const fn = {
    name: options.name,
    entry: options.entry ?? options.name,
    timeoutSeconds: options.timeoutSeconds,
    memoryMb: options.memoryMb,
  };
  const abort = new AbortController();
  let stopped = false;

  async function runBatch(messages: Message[]): Promise<void> {
    const event: SQSEvent = { Records: messages.map((m) => toRecord(m, options.queueArn)) };
    let failed: Set<string>;
    try {
      // A function that throws, crashes, runs out of memory or times out fails the whole batch.
      const result = (await invoker.invoke(fn, event)) as SQSBatchResponse | undefined;
      failed = new Set((result?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
      // An identifier that is not in the batch makes Lambda retry the whole batch.
      if ([...failed].some((id) => !messages.some((m) => m.MessageId === id)))
        failed = new Set(messages.map((m) => m.MessageId!));
    } catch (err) {
      options.onError?.(err);
      failed = new Set(messages.map((m) => m.MessageId!));
    }
    const done = messages.filter((m) => !failed.has(m.MessageId!));
    const retry = messages.filter((m) => failed.has(m.MessageId!));
    if (done.length) {
      await options.sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
        }),
      );
    }
    if (retry.length && options.retryDelaySeconds !== undefined) {
      await options.sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: retry.map((m, i) => ({
            Id: String(i),
            ReceiptHandle: m.ReceiptHandle!,
            VisibilityTimeout: options.retryDelaySeconds,
          })),
        }),
      );
    }
  }

  async function worker(): Promise<void> {
    while (!stopped) {
      try {
        const out = await options.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: options.queueUrl,
            MaxNumberOfMessages: options.batchSize,
            WaitTimeSeconds: 1,
            MessageSystemAttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
          { abortSignal: abort.signal },
        );
        if (out.Messages?.length) await runBatch(out.Messages);
      } catch (err) {
        if (stopped) break;
        options.onError?.(err);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  const workers = Array.from({ length: options.concurrency }, () => worker());
  return {
    async stop() {
      stopped = true;
      abort.abort();
      await Promise.allSettled(workers);
    },
  };
}
