import '../config/webhooks.ts';
import { dynamo, sqsClient } from '../clients.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { WebhookDeps } from './webhook-service.ts';
import { webhookQueue } from './webhook-queue.ts';
import { WebhookRepository } from './webhook-repository.ts';

/** What the webhook routes and the delivery function work with, from the configuration. */
export const webhookDeps = (settings: Config, clock: Clock): WebhookDeps => ({
  webhooks: new WebhookRepository(dynamo(), settings.TABLE_NAME),
  queue: webhookQueue(sqsClient(), settings.WEBHOOK_QUEUE_URL),
  clock,
  settings: {
    maxPerUser: settings.WEBHOOKS_MAX_PER_USER,
    retryDelaysS: settings.WEBHOOK_RETRY_DELAYS_S,
    receiver: { allowLoopback: settings.WEBHOOK_ALLOW_LOOPBACK, timeoutMs: settings.WEBHOOK_TIMEOUT_MS },
  },
});
