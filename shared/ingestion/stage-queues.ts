import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Config } from '../config.ts';
import { queueUrlSetting, type PipelineStageName } from '../files/stages.ts';

// Sending pipeline messages: batches of ten (the SQS maximum), entries SQS refused sent again.

/** The stages' queues, as the domain sends to them. */
export interface StageQueues {
  send(stage: PipelineStageName, bodies: object[]): Promise<void>;
}

/** The queues of a configuration (its queue URL settings), through one SQS client. */
export function stageQueues(sqs: SQSClient, config: Config): StageQueues {
  return {
    async send(stage, bodies) {
      // Checked when sent to: a function sends to some stages only, and only those are set for it.
      const queueUrl = config[queueUrlSetting[stage]];
      if (!queueUrl) throw new Error(`${queueUrlSetting[stage]} is not set`);
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
    },
  };
}
