import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { randomBytes } from 'node:crypto';
import { startPoller } from '#infra/local/poller.ts';
import { until } from '#test/helpers/until.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '#infra/local/emulators.ts';

// The local event source mapping against fauxqs: real SQS events in batches, partial batch
// failures honoured, and a message that keeps failing redriven to the DLQ.

const sqs = new SQSClient({
  endpoint: process.env.TEST_FAUXQS_ENDPOINT,
  region: LOCAL_REGION,
  credentials: LOCAL_CREDENTIALS,
});
afterAll(() => sqs.destroy());

async function queueWithDlq(maxReceiveCount: number) {
  const name = `poller-${randomBytes(4).toString('hex')}`;
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
  const attrs = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }));
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: '30',
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: attrs.Attributes!.QueueArn,
          maxReceiveCount: String(maxReceiveCount),
        }),
      },
    }),
  );
  const arn = (
    await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queue.QueueUrl, AttributeNames: ['QueueArn'] }))
  ).Attributes!.QueueArn!;
  return { url: queue.QueueUrl!, arn, dlqUrl: dlq.QueueUrl! };
}

test('batches succeed, a failing item is retried alone and ends in the DLQ', async () => {
  const q = await queueWithDlq(3);
  const seen: SQSEvent['Records'][] = [];
  const attemptsOfPoison: number[] = [];
  const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
    seen.push(event.Records);
    const failures = event.Records.filter((r) => JSON.parse(r.body).poison).map((r) => {
      attemptsOfPoison.push(Number(r.attributes.ApproximateReceiveCount));
      return { itemIdentifier: r.messageId };
    });
    return { batchItemFailures: failures };
  };
  const poller = startPoller({
    name: 'test',
    sqs,
    queueUrl: q.url,
    queueArn: q.arn,
    batchSize: 5,
    concurrency: 1,
    timeoutSeconds: 30, // the queue's visibility timeout; generous for handlers that answer at once
    memoryMb: 128,
    retryDelaySeconds: 0,
    loadHandler: async () => handler,
  });
  try {
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: q.url,
        Entries: [
          { Id: '1', MessageBody: JSON.stringify({ n: 1 }) },
          { Id: '2', MessageBody: JSON.stringify({ n: 2, poison: true }) },
          { Id: '3', MessageBody: JSON.stringify({ n: 3 }) },
        ],
      }),
    );
    await until('the poison message in the DLQ', async () => {
      const dead = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: q.dlqUrl, WaitTimeSeconds: 0, VisibilityTimeout: 0 }),
      );
      return (dead.Messages ?? []).some((m) => JSON.parse(m.Body!).n === 2);
    });
  } finally {
    await poller.stop();
  }
  const first = seen[0]!;
  expect(first.length).toBeGreaterThanOrEqual(1);
  expect(first[0]).toMatchObject({ eventSource: 'aws:sqs', eventSourceARN: q.arn, awsRegion: 'us-east-1' });
  const bodies = seen.flat().map((r) => JSON.parse(r.body).n);
  // The good messages ran once each; the poison one ran until the redrive policy took it.
  expect(bodies.filter((n) => n === 1)).toHaveLength(1);
  expect(bodies.filter((n) => n === 3)).toHaveLength(1);
  expect(attemptsOfPoison).toEqual([1, 2, 3]);
});

test('a handler that throws fails the whole batch, which is delivered again', async () => {
  const q = await queueWithDlq(5);
  let calls = 0;
  const handler = async () => {
    calls++;
    if (calls === 1) throw new Error('cold start failed');
    return { batchItemFailures: [] };
  };
  const errors: unknown[] = [];
  const poller = startPoller({
    name: 'test',
    sqs,
    queueUrl: q.url,
    queueArn: q.arn,
    batchSize: 10,
    concurrency: 1,
    timeoutSeconds: 30, // the queue's visibility timeout; generous for handlers that answer at once
    memoryMb: 128,
    retryDelaySeconds: 0,
    loadHandler: async () => handler,
    onError: (err) => errors.push(err),
  });
  try {
    await sqs.send(new SendMessageBatchCommand({ QueueUrl: q.url, Entries: [{ Id: 'a', MessageBody: '{}' }] }));
    await until('the batch delivered again', () => calls >= 2);
    await until('the queue drained', async () => {
      const attrs = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: q.url,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      return (
        attrs.Attributes!.ApproximateNumberOfMessages === '0' &&
        attrs.Attributes!.ApproximateNumberOfMessagesNotVisible === '0'
      );
    });
  } finally {
    await poller.stop();
  }
  expect(errors).toHaveLength(1);
  expect(calls).toBe(2);
});
