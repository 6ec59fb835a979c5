import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { sqsBatchHandler } from '#shared/ingestion/stage-handler.ts';
import { webhookDeps } from '#shared/webhooks/webhook-deps.ts';
import { handleWebhookMessage } from '#shared/webhooks/webhook-service.ts';

// webhook-delivery (SQS, the webhook queue): an event fanned out to the user's endpoints, or one
// signed attempt of one delivery; a failed attempt queues the next after its delay. A message
// whose handling throws (the table unreachable) comes back, and after maxReceiveCount goes to the DLQ.

const deps = webhookDeps(config(), systemClock);

export const handler = sqsBatchHandler(async (record) => await handleWebhookMessage(deps, record.body));
