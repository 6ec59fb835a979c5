import { signatureHeader } from '#shared/payments/stripe/signature.ts';
import { type Json, now, type ProviderEvent, randomId, type StandInState } from './state.ts';

// The stand-in's events: each one made is signed (Stripe-Signature) and posted to the service's
// webhook, one at a time in order of making, and retried while the service does not answer 2xx.

export interface Delivery {
  eventId: string;
  type: string;
  status: number | 'unreachable';
  body: string;
}

export const DEFAULT_RETRY_DELAYS_MS = [1_000, 2_000, 5_000, 10_000, 30_000, 60_000];

const acknowledges = (delivery: Delivery) => typeof delivery.status === 'number' && delivery.status < 300;

/** The events' sender: what it made and posted, and the controls the stand-in hands its callers. */
export function webhookSender(state: StandInState, webhookSecret: string, retryDelays: number[]) {
  const { unacknowledged } = state;
  const events: ProviderEvent[] = [...unacknowledged.values()];
  const deliveries: Delivery[] = [];
  const waiters: { match: (event: Json) => boolean; resolve: (d: Delivery) => void }[] = [];
  const queue: ProviderEvent[] = [...unacknowledged.values()];
  const timers = new Set<NodeJS.Timeout>();
  let webhookUrl: string | undefined;
  let paused = false;
  let closed = false;
  let pumping = false;

  async function post(event: ProviderEvent): Promise<Delivery> {
    if (!webhookUrl) return { eventId: event.id, type: event.type, status: 'unreachable', body: '' };
    let delivery: Delivery;
    try {
      const res = await fetch(webhookUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
          'stripe-signature': signatureHeader(event.body, webhookSecret, now()),
        },
        body: event.body,
      });
      delivery = { eventId: event.id, type: event.type, status: res.status, body: await res.text() };
    } catch {
      delivery = { eventId: event.id, type: event.type, status: 'unreachable', body: '' };
    }
    deliveries.push(delivery);
    if (acknowledges(delivery)) {
      if (unacknowledged.delete(event.id)) state.save();
      const parsed = JSON.parse(event.body) as Json;
      for (const waiter of [...waiters]) {
        if (waiter.match(parsed)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(delivery);
        }
      }
    }
    return delivery;
  }

  /** Posts queued events one at a time, in order of making; one not acknowledged is tried again later. */
  async function pump() {
    if (pumping) return;
    pumping = true;
    try {
      while (queue.length && webhookUrl && !paused && !closed) await deliverWithRetries(queue.shift()!, 0);
    } finally {
      pumping = false;
    }
  }

  async function deliverWithRetries(event: ProviderEvent, attempt: number): Promise<void> {
    if (closed) return;
    const delivery = await post(event);
    if (acknowledges(delivery) || attempt >= retryDelays.length || closed) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      void deliverWithRetries(event, attempt + 1);
    }, retryDelays[attempt]);
    timers.add(timer);
  }

  return {
    events,
    deliveries,
    /** Makes an event about `object` and queues it for delivery. */
    emit(type: string, object: Json, request: { idempotencyKey?: string | undefined }) {
      const event = {
        id: randomId('evt'),
        object: 'event',
        api_version: '2024-06-20',
        created: now(),
        data: { object },
        livemode: false,
        pending_webhooks: 1,
        request: { id: randomId('req', 14), idempotency_key: request.idempotencyKey ?? null },
        type,
      };
      const made = { id: event.id, type, body: JSON.stringify(event, null, 2) };
      events.push(made);
      unacknowledged.set(made.id, made);
      queue.push(made);
      void pump();
    },
    setWebhookUrl(target: string) {
      webhookUrl = target;
      void pump();
    },
    acknowledged(match: (event: Json) => boolean): Promise<Delivery> {
      return new Promise((resolve) => {
        const done = deliveries.find(
          (d) => acknowledges(d) && match(JSON.parse(events.find((e) => e.id === d.eventId)!.body) as Json),
        );
        if (done) resolve(done);
        else waiters.push({ match, resolve });
      });
    },
    pauseDeliveries() {
      paused = true;
    },
    resumeDeliveries() {
      paused = false;
      void pump();
    },
    deliver(eventId: string) {
      const event = events.find((e) => e.id === eventId);
      if (!event) throw new Error(`No event ${eventId}`);
      return post(event);
    },
    close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
    },
  };
}

export type WebhookSender = ReturnType<typeof webhookSender>;
