import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import * as z from '../zod.ts';
import { queuedEventSchema } from '../events/service-events.ts';

// The webhook queue's messages: an event to fan out to the user's endpoints (shared/events/), or
// one attempt of one delivery. An attempt due later than SQS can delay a message (15 minutes)
// carries `dueAt`: it is sent on again until then (docs/DECISIONS.md "Webhooks").

/** SQS's longest message delay. */
export const MAX_DELAY_SECONDS = 900;

export const attemptMessageSchema = z.object({
  kind: z.literal('attempt'),
  userId: z.string().check(z.minLength(1), z.maxLength(100)),
  endpointId: z.string().check(z.minLength(1), z.maxLength(100)),
  deliveryId: z.string().check(z.minLength(1), z.maxLength(100)),
  /** The delivery's creation time (part of its key). */
  createdAt: z.iso.datetime(),
  /** 1-based. */
  attempt: z.number().check(z.int(), z.gte(1), z.lte(100)),
  /** ISO time before which the attempt is not made. */
  dueAt: z.optional(z.iso.datetime()),
});
export type AttemptMessage = z.infer<typeof attemptMessageSchema>;

export const webhookMessageSchema = z.discriminatedUnion('kind', [queuedEventSchema, attemptMessageSchema]);

export interface WebhookQueue {
  sendAttempt(message: AttemptMessage, delaySeconds: number): Promise<void>;
}

export function webhookQueue(sqs: SQSClient, queueUrl: string | undefined): WebhookQueue {
  return {
    async sendAttempt(message, delaySeconds) {
      if (!queueUrl) throw new Error('WEBHOOK_QUEUE_URL is not set');
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: JSON.stringify(message),
          DelaySeconds: Math.max(0, Math.min(MAX_DELAY_SECONDS, Math.ceil(delaySeconds))),
        }),
      );
    },
  };
}
