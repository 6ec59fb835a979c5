import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { LOCAL_REGION } from '#infra/local/emulators.ts';

/** Messages a queue holds, visible or in flight (0: every message sent was taken and deleted). */
export async function messagesIn(sqs: SQSClient, queueUrl: string): Promise<number> {
  const names = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] as const;
  const out = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: [...names] }));
  return names.reduce((n, name) => n + Number(out.Attributes?.[name] ?? 0), 0);
}

/** A record of `queueArn` as Lambda delivers it to an SQS consumer (received `receiveCount` times). */
export function sqsRecord(
  queueArn: string,
  message: { messageId: string; receiptHandle?: string; body: string },
  receiveCount = '1',
): SQSRecord {
  return {
    messageId: message.messageId,
    receiptHandle: message.receiptHandle ?? message.messageId,
    body: message.body,
    attributes: {
      ApproximateReceiveCount: receiveCount,
      SentTimestamp: String(Date.now()),
      SenderId: 'test',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: LOCAL_REGION,
  };
}
