import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** Messages a queue holds, visible or in flight (0: every message sent was taken and deleted). */
export async function messagesIn(sqs: SQSClient, queueUrl: string): Promise<number> {
  const names = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] as const;
  const out = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: [...names] }));
  return names.reduce((n, name) => n + Number(out.Attributes?.[name] ?? 0), 0);
}
