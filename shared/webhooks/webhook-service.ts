import { createHash } from 'node:crypto';
import { createId } from '../ids.ts';
import { isoNow, type Clock } from '../clock.ts';
import { ConflictError } from '../errors.ts';
import type { QueuedEvent } from '../events/service-events.ts';
import { logger } from '../observability/logger.ts';
import { checkReceiverUrl, postToReceiver, type ReceiverPolicy } from './receiver.ts';
import { newWebhookSecret, signedHeaders } from './signature.ts';
import { webhookMessageSchema, type AttemptMessage, type WebhookQueue } from './webhook-queue.ts';
import {
  DELIVERY_DAYS,
  endpointNotFound,
  type Delivery,
  type WebhookEndpoint,
  type WebhookRepository,
} from './webhook-repository.ts';

// Webhooks (docs/DECISIONS.md "Webhooks"): a user's endpoints (created with a URL that passes the
// download guard and a secret shown once, listed without it, deleted with their log), the fan-out
// of an event to the endpoints subscribed to it, and each delivery's attempts: signed per the
// Standard Webhooks specification, the same webhook-id on every attempt, retried after the
// delays of WEBHOOK_RETRY_DELAYS_S, then recorded failed.

export interface WebhookDeps {
  webhooks: WebhookRepository;
  queue: WebhookQueue;
  clock: Clock;
  settings: WebhookSettings;
}

export interface WebhookSettings {
  maxPerUser: number;
  retryDelaysS: number[];
  receiver: ReceiverPolicy;
}

/** An endpoint as listed (the secret is shown only by the creation). */
export type EndpointView = Omit<WebhookEndpoint, 'secret' | 'userId'>;
const viewOf = ({ secret: _secret, userId: _userId, ...rest }: WebhookEndpoint): EndpointView => rest;

/** Steps: the URL through the guard (400) → the user's count under the cap (409) → stored with a new secret. */
export async function createEndpoint(
  deps: WebhookDeps,
  input: { userId: string; url: string; events: string[] },
): Promise<EndpointView & { secret: string }> {
  await checkReceiverUrl(input.url, deps.settings.receiver);
  const existing = await deps.webhooks.listEndpoints(input.userId);
  if (existing.length >= deps.settings.maxPerUser)
    throw new ConflictError(
      `You have ${deps.settings.maxPerUser} webhook endpoints, the most one account may have; delete one first`,
      'WEBHOOK_LIMIT',
    );
  const endpoint: WebhookEndpoint = {
    id: createId(),
    userId: input.userId,
    url: input.url,
    events: [...new Set(input.events)],
    secret: newWebhookSecret(),
    createdAt: isoNow(deps.clock),
  };
  await deps.webhooks.createEndpoint(endpoint);
  return { ...viewOf(endpoint), secret: endpoint.secret };
}

/** One page of the caller's endpoints, without their secrets. */
export async function listEndpoints(
  deps: Pick<WebhookDeps, 'webhooks'>,
  input: { userId: string; limit: number; cursor?: string | undefined },
) {
  const page = await deps.webhooks.listEndpointPage(input.userId, input);
  return { ...page, items: page.items.map(viewOf) };
}

export const deleteEndpoint = (deps: Pick<WebhookDeps, 'webhooks'>, input: { userId: string; endpointId: string }) =>
  deps.webhooks.deleteEndpoint(input.userId, input.endpointId);

/** An endpoint's deliveries, newest first (the caller's endpoint only). */
export async function listDeliveries(
  deps: Pick<WebhookDeps, 'webhooks'>,
  input: { userId: string; endpointId: string; limit: number; cursor?: string | undefined },
) {
  if (!(await deps.webhooks.getEndpoint(input.userId, input.endpointId))) throw endpointNotFound();
  const page = await deps.webhooks.listDeliveries(input.endpointId, input);
  return {
    ...page,
    items: page.items.map((d) => ({
      id: d.id,
      event: d.type,
      status: d.status,
      attempts: d.attempts,
      lastStatusCode: d.lastStatusCode,
      lastError: d.lastError,
      nextAttemptAt: d.nextAttemptAt,
      createdAt: d.createdAt,
      updatedAt: d.updatedAt,
    })),
  };
}

/** The webhook-id of an event's delivery to an endpoint: the same however often the fan-out runs. */
const deliveryIdOf = (eventId: string, endpointId: string) =>
  `msg_${createHash('sha256').update(`${eventId}:${endpointId}`).digest('base64url').slice(0, 27)}`;

/** Records a delivery and queues its first attempt (again when a fan-out runs again before any attempt). */
async function queueDelivery(
  deps: WebhookDeps,
  endpoint: WebhookEndpoint,
  event: { id: string; type: string; timestamp: string; data: Record<string, unknown> },
): Promise<Delivery> {
  const now = isoNow(deps.clock);
  const delivery: Delivery = {
    id: event.id,
    endpointId: endpoint.id,
    userId: endpoint.userId,
    type: event.type,
    body: JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data }),
    status: 'pending',
    attempts: 0,
    createdAt: event.timestamp,
    updatedAt: now,
  };
  const expiresAt = Math.floor(deps.clock().getTime() / 1000) + DELIVERY_DAYS * 86_400;
  if (!(await deps.webhooks.createDelivery(delivery, expiresAt))) {
    const stored = await deps.webhooks.getDelivery(delivery);
    if (stored && stored.attempts > 0) return stored; // its attempts are under way
  }
  await deps.queue.sendAttempt(
    {
      kind: 'attempt',
      userId: endpoint.userId,
      endpointId: endpoint.id,
      deliveryId: delivery.id,
      createdAt: delivery.createdAt,
      attempt: 1,
    },
    0,
  );
  return delivery;
}

/** POST /me/webhooks/{id}/test: a `ping` delivered as any event is. */
export async function pingEndpoint(deps: WebhookDeps, input: { userId: string; endpointId: string }) {
  const endpoint = await deps.webhooks.getEndpoint(input.userId, input.endpointId);
  if (!endpoint) throw endpointNotFound();
  const timestamp = isoNow(deps.clock);
  const delivery = await queueDelivery(deps, endpoint, {
    id: deliveryIdOf(createId(), endpoint.id),
    type: 'ping',
    timestamp,
    data: { endpointId: endpoint.id },
  });
  return { deliveryId: delivery.id, event: 'ping', status: delivery.status };
}

/** An event from the queue: a delivery to each of the user's endpoints subscribed to its type. */
export async function fanOut(deps: WebhookDeps, event: QueuedEvent): Promise<number> {
  const endpoints = (await deps.webhooks.listEndpoints(event.userId)).filter((e) => e.events.includes(event.type));
  for (const endpoint of endpoints)
    await queueDelivery(deps, endpoint, {
      id: deliveryIdOf(event.eventId, endpoint.id),
      type: event.type,
      timestamp: event.timestamp,
      data: event.data,
    });
  return endpoints.length;
}

/** Thrown when an attempt arrives before the previous one is recorded: SQS delivers it again later. */
export class AttemptOutOfOrder extends Error {
  override name = 'AttemptOutOfOrder';
}

/**
 * One attempt of a delivery. Steps: not due yet → sent on (SQS delays 15 minutes at most) →
 * the delivery and its endpoint (either gone, or the attempt already made: nothing to do) →
 * POST, signed anew (same webhook-id, this attempt's timestamp) → on failure, the next attempt
 * queued after its delay (or, after the last, the delivery failed) → the attempt recorded, on
 * condition that it is the next one, so a message delivered twice records once.
 */
export async function attemptDelivery(deps: WebhookDeps, msg: AttemptMessage): Promise<Delivery['status'] | 'skipped'> {
  const now = deps.clock();
  if (msg.dueAt && Date.parse(msg.dueAt) > now.getTime()) {
    await deps.queue.sendAttempt(msg, (Date.parse(msg.dueAt) - now.getTime()) / 1000);
    return 'skipped';
  }
  const key = { endpointId: msg.endpointId, createdAt: msg.createdAt, id: msg.deliveryId };
  const [delivery, endpoint] = await Promise.all([
    deps.webhooks.getDelivery(key),
    deps.webhooks.getEndpoint(msg.userId, msg.endpointId),
  ]);
  if (!delivery || !endpoint || delivery.userId !== msg.userId) return 'skipped';
  if (delivery.attempts >= msg.attempt || delivery.status === 'delivered' || delivery.status === 'failed')
    return 'skipped';
  if (delivery.attempts < msg.attempt - 1)
    throw new AttemptOutOfOrder(`Attempt ${msg.attempt} of ${delivery.id} came early`);

  const seconds = Math.floor(now.getTime() / 1000);
  const outcome = await postToReceiver(
    endpoint.url,
    delivery.body,
    signedHeaders(endpoint.secret, delivery.id, seconds, delivery.body),
    deps.settings.receiver,
  );
  const at = isoNow(deps.clock);
  if (outcome.ok) {
    await deps.webhooks.recordAttempt(
      key,
      msg.attempt,
      { status: 'delivered', lastStatusCode: outcome.statusCode },
      at,
    );
    return 'delivered';
  }
  const delay = deps.settings.retryDelaysS[msg.attempt - 1];
  const failedAs = { lastStatusCode: outcome.statusCode, lastError: outcome.error.slice(0, 500) };
  if (delay === undefined) {
    await deps.webhooks.recordAttempt(key, msg.attempt, { status: 'failed', ...failedAs }, at);
    logger.warn('webhook delivery failed for good', { deliveryId: delivery.id, attempts: msg.attempt });
    return 'failed';
  }
  const dueAt = new Date(deps.clock().getTime() + delay * 1000).toISOString();
  // Queued before it is recorded: a crash between the two repeats this attempt (same webhook-id),
  // and the next attempt's message that ran ahead waits for the record (AttemptOutOfOrder).
  await deps.queue.sendAttempt({ ...msg, attempt: msg.attempt + 1, dueAt }, delay);
  await deps.webhooks.recordAttempt(key, msg.attempt, { status: 'retrying', ...failedAs, nextAttemptAt: dueAt }, at);
  return 'retrying';
}

/** A message of the webhook queue: an event fanned out, or an attempt made. A body that is neither is logged and dropped. */
export async function handleWebhookMessage(deps: WebhookDeps, rawBody: string): Promise<void> {
  let parsed: ReturnType<typeof webhookMessageSchema.safeParse>;
  try {
    parsed = webhookMessageSchema.safeParse(JSON.parse(rawBody));
  } catch {
    parsed = { success: false } as typeof parsed;
  }
  if (!parsed.success) {
    logger.error('webhook message with an unknown body', { body: rawBody.slice(0, 512) });
    return;
  }
  const msg = parsed.data;
  if (msg.kind === 'event') await fanOut(deps, msg);
  else await attemptDelivery(deps, msg);
}
