import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { config } from '../config.ts';
import { queueUrlSetting, type PipelineStageName } from './stages.ts';

// Sending pipeline messages: batches of ten (the SQS maximum), entries SQS refused sent again.

export function stageQueueUrl(stage: PipelineStageName): string {
  const url = config()[queueUrlSetting[stage]];
  if (!url) throw new Error(`${queueUrlSetting[stage]} is not set`);
  return url;
}

export async function sendToStage(sqs: SQSClient, stage: PipelineStageName, bodies: object[]): Promise<void> {
  const queueUrl = stageQueueUrl(stage);
  for (let i = 0; i < bodies.length; i += 10) {
    let entries = bodies.slice(i, i + 10).map((b, j) => ({ Id: String(j), MessageBody: JSON.stringify(b) }));
    for (let attempt = 0; entries.length; attempt++) {
      if (attempt >= 5) throw new Error(`SQS refused ${entries.length} messages to ${stage}`);
      if (attempt > 0) await new Promise((r) => setTimeout(r, 50 * 2 ** attempt));
      const out = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
      const failed = new Set((out.Failed ?? []).map((f) => f.Id));
      entries = entries.filter((e) => failed.has(e.Id));
    }
  }
}
