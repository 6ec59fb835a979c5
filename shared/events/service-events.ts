import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { createId } from '../ids.ts';
import * as z from '../zod.ts';
import { asError } from '../errors.ts';
import { logger } from '../observability/logger.ts';

// What happened to a user's things that their programs may want to hear of (docs/DECISIONS.md
// "Webhooks"): a file ingested or failed, an export ready, an order paid. Where it happens, the
// code emits the event; emitting is one SQS message to the webhook queue and nothing else, so a
// receiver that is slow or down never delays (or fails) the work that emitted it: the delivery
// function fans the event out to the user's endpoints and delivers each on its own.

export const SERVICE_EVENT_TYPES = ['file.completed', 'file.failed', 'export.ready', 'order.paid'] as const;
export type ServiceEventType = (typeof SERVICE_EVENT_TYPES)[number];

/** An event as it is queued: the body of a `webhook.event` message. */
export const queuedEventSchema = z.object({
  kind: z.literal('event'),
  /** Unique per event; each endpoint's delivery id (webhook-id) is derived from it. */
  eventId: z.string().check(z.minLength(1), z.maxLength(100)),
  userId: z.string().check(z.minLength(1), z.maxLength(100)),
  type: z.enum(SERVICE_EVENT_TYPES),
  /** ISO time of the event. */
  timestamp: z.iso.datetime(),
  data: z.record(z.string(), z.unknown()),
});
export type QueuedEvent = z.infer<typeof queuedEventSchema>;

export interface ServiceEvents {
  /** Queues the event; never throws (a failure is logged: the work that emitted it stands). */
  emit(userId: string, type: ServiceEventType, data: Record<string, unknown>): Promise<void>;
}

/** Events sent to the webhook queue (WEBHOOK_QUEUE_URL); without one (a function not granted it), none. */
export function queuedEvents(sqs: SQSClient, queueUrl: string | undefined, now = () => new Date()): ServiceEvents {
  return {
    async emit(userId, type, data) {
      if (!queueUrl) return;
      const event: QueuedEvent = {
        kind: 'event',
        eventId: createId(),
        userId,
        type,
        timestamp: now().toISOString(),
        data,
      };
      try {
        await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(event) }));
      } catch (err) {
        logger.error('could not queue a service event', { type, userId, error: asError(err) });
      }
    },
  };
}

/** Emits nothing (tests and tools that run a stage without webhooks). */
export const noEvents: ServiceEvents = { emit: async () => undefined };
