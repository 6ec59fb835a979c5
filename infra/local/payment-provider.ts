import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { signatureHeader } from '#shared/payments/stripe/signature.ts';

// A loopback stand-in of the payment provider (Stripe's API), for npm start and the tests: what
// the service and `npm run pay` call, on the provider's wire protocol. Form-encoded requests with
// a bearer secret key; Idempotency-Key on writes (a replay answers the first response again, with
// `Idempotent-Replayed: true`; the same key with other parameters is an `idempotency_error`);
// errors as `{ error: { type, code, message } }` with the provider's statuses (400, 401, 402, 404,
// 500); and every event signed (Stripe-Signature) and posted to the service's webhook, retried
// while the service does not answer 2xx. Cards are the provider's test payment methods:
// `pm_card_visa` pays, `pm_card_chargeDeclined` is declined.
//
// With a DATA_DIR (npm start), the keys are kept in DATA_DIR/local-payments.json, with the
// stand-in's URL for `npm run pay`, and its intents, charges, idempotency keys and the events not
// yet acknowledged in DATA_DIR/local-payments-state.json, written after every change: a restart
// loses no payment, and delivers what it had not delivered.

export const LOCAL_PAYMENTS_FILE = 'local-payments.json';
const STATE_FILE = 'local-payments-state.json';

interface SavedState {
  intents: Json[];
  charges: Json[];
  idempotent: [string, { fingerprint: string; status: number; body: string }][];
  unacknowledged: ProviderEvent[];
}
export const SUCCEEDING_CARD = 'pm_card_visa';
export const DECLINED_CARD = 'pm_card_chargeDeclined';

export interface LocalPaymentsFile {
  secretKey: string;
  webhookSecret: string;
  /** What a browser holds (the provider's publishable key): it may only confirm an intent whose client secret it has. */
  publishableKey?: string;
  /** Where the stand-in of the running npm start listens (changes with each start). */
  apiUrl?: string;
}

type Json = Record<string, unknown>;

export interface ProviderEvent {
  id: string;
  type: string;
  /** The exact body posted (and signed). */
  body: string;
}

export interface Delivery {
  eventId: string;
  type: string;
  status: number | 'unreachable';
  body: string;
}

export interface PaymentProviderStandIn {
  url: string;
  secretKey: string;
  publishableKey: string;
  webhookSecret: string;
  /** Where events are posted (the service's POST /payments/webhook); none: they wait. */
  setWebhookUrl(url: string): void;
  /** Every event made so far, in order. */
  events: ProviderEvent[];
  /** Every delivery attempt so far, in order. */
  deliveries: Delivery[];
  /** Resolves with the first acknowledged (2xx) delivery of an event matching `match`, once there is one. */
  acknowledged(match: (event: Json) => boolean): Promise<Delivery>;
  /** Holds new events (they are made, not posted) until `resumeDeliveries`. */
  pauseDeliveries(): void;
  resumeDeliveries(): void;
  /** Posts an event (again) now, once, outside the retry queue; the service's answer. */
  deliver(eventId: string): Promise<Delivery>;
  /** Answers every API request with this status and the provider's api_error (an outage); undefined: normal again. */
  setOutage(status: number | undefined): void;
  close(): Promise<void>;
}

export interface PaymentProviderOptions {
  /** Keys kept here (local-payments.json); none: fresh keys in memory (tests). */
  dataDir?: string;
  /** Waits between delivery attempts of an event that was not acknowledged (the provider's are hours; locally seconds). */
  retryDelaysMs?: number[];
}

const DEFAULT_RETRY_DELAYS_MS = [1_000, 2_000, 5_000, 10_000, 30_000, 60_000];

const randomId = (prefix: string, length = 24) =>
  `${prefix}_${randomBytes(length).toString('base64url').replace(/[-_]/g, '').slice(0, length).padEnd(length, '0')}`;

/** The stand-in's keys: those kept in dataDir (made the first time). */
async function keysIn(dataDir: string | undefined): Promise<Required<Omit<LocalPaymentsFile, 'apiUrl'>>> {
  const fresh = {
    secretKey: randomId('sk_test', 32),
    webhookSecret: randomId('whsec', 32),
    publishableKey: randomId('pk_test', 32),
  };
  if (!dataDir) return fresh;
  try {
    const kept = JSON.parse(await readFile(join(dataDir, LOCAL_PAYMENTS_FILE), 'utf8')) as LocalPaymentsFile;
    if (kept.secretKey && kept.webhookSecret) return { ...fresh, ...kept };
  } catch {
    // none yet (or unreadable): new keys
  }
  return fresh;
}

/** Reads DATA_DIR/local-payments.json (what `npm run pay` uses). */
export async function readLocalPayments(dataDir: string): Promise<LocalPaymentsFile> {
  return JSON.parse(await readFile(join(dataDir, LOCAL_PAYMENTS_FILE), 'utf8')) as LocalPaymentsFile;
}

/** `metadata[orderId]=x` → { metadata: { orderId: 'x' } }. */
function formDecode(text: string): Json {
  const out: Json = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const nested = /^(\w+)\[(\w+)\]$/.exec(key);
    if (nested) out[nested[1]!] = { ...(out[nested[1]!] as Json | undefined), [nested[2]!]: value };
    else out[key] = value;
  }
  return out;
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: { type: string; code?: string; message: string; param?: string; payment_intent?: Json },
  ) {
    super(body.message);
  }
}

const invalid = (message: string, code?: string, param?: string) =>
  new ApiError(400, { type: 'invalid_request_error', message, ...(code && { code }), ...(param && { param }) });

export async function startPaymentProvider(options: PaymentProviderOptions = {}): Promise<PaymentProviderStandIn> {
  const keys = await keysIn(options.dataDir);
  const retryDelays = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  const statePath = options.dataDir && join(options.dataDir, STATE_FILE);
  const saved = statePath
    ? ((await readFile(statePath, 'utf8').then(JSON.parse, () => undefined)) as SavedState | undefined)
    : undefined;
  const intents = new Map<string, Json>(saved?.intents.map((i) => [String(i.id), i]));
  const charges = new Map<string, Json>(saved?.charges.map((c) => [String(c.id), c]));
  const idempotent = new Map<string, { fingerprint: string; status: number; body: string }>(saved?.idempotent);
  /** Events made and not yet acknowledged by the service (kept across restarts, delivered again). */
  const unacknowledged = new Map<string, ProviderEvent>(saved?.unacknowledged.map((e) => [e.id, e]));
  const events: ProviderEvent[] = [...unacknowledged.values()];
  const deliveries: Delivery[] = [];
  const waiters: { match: (event: Json) => boolean; resolve: (d: Delivery) => void }[] = [];
  let webhookUrl: string | undefined;
  let outage: number | undefined;
  let paused = false;
  let closed = false;
  const queue: ProviderEvent[] = [...unacknowledged.values()];
  let pumping = false;

  /** Writes the state whole, then renames it into place (a reader, or a crash, never sees half of it). */
  function save() {
    if (!statePath) return;
    const state: SavedState = {
      intents: [...intents.values()],
      charges: [...charges.values()],
      idempotent: [...idempotent],
      unacknowledged: [...unacknowledged.values()],
    };
    writeFileSync(`${statePath}.tmp`, JSON.stringify(state));
    renameSync(`${statePath}.tmp`, statePath);
  }
  const timers = new Set<NodeJS.Timeout>();

  const now = () => Math.floor(Date.now() / 1000);

  async function post(event: ProviderEvent): Promise<Delivery> {
    if (!webhookUrl) return { eventId: event.id, type: event.type, status: 'unreachable', body: '' };
    let delivery: Delivery;
    try {
      const res = await fetch(webhookUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
          'stripe-signature': signatureHeader(event.body, keys.webhookSecret, now()),
        },
        body: event.body,
      });
      delivery = { eventId: event.id, type: event.type, status: res.status, body: await res.text() };
    } catch {
      delivery = { eventId: event.id, type: event.type, status: 'unreachable', body: '' };
    }
    deliveries.push(delivery);
    if (typeof delivery.status === 'number' && delivery.status < 300) {
      if (unacknowledged.delete(event.id)) save();
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
    const ok = typeof delivery.status === 'number' && delivery.status < 300;
    if (ok || attempt >= retryDelays.length || closed) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      void deliverWithRetries(event, attempt + 1);
    }, retryDelays[attempt]);
    timers.add(timer);
  }

  function emit(type: string, object: Json, request: { idempotencyKey?: string }) {
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
  }

  function intentOf(id: string): Json {
    const intent = intents.get(id);
    if (!intent) {
      throw new ApiError(404, {
        type: 'invalid_request_error',
        code: 'resource_missing',
        param: 'intent',
        message: `No such payment_intent: '${id}'`,
      });
    }
    return intent;
  }

  function unexpectedState(intent: Json, action: string) {
    return new ApiError(400, {
      type: 'invalid_request_error',
      code: 'payment_intent_unexpected_state',
      message: `You cannot ${action} this PaymentIntent because it has a status of ${intent.status}.`,
      payment_intent: intent,
    });
  }

  type Handler = (
    params: Json,
    match: RegExpExecArray,
    key: string | undefined,
    /** Called with the publishable key (a browser holding a client secret), not the secret key. */
    publishable: boolean,
  ) => [number, Json];
  /** Method, path, handler, and whether a publishable key may call it (confirming, with the client secret). */
  const routes: [string, RegExp, Handler, boolean?][] = [
    [
      'POST',
      /^\/v1\/payment_intents$/,
      (params, _m, key) => {
        const amount = Number(params.amount);
        if (params.amount === undefined)
          throw invalid('Missing required param: amount.', 'parameter_missing', 'amount');
        if (!Number.isInteger(amount))
          throw invalid(`Invalid integer: ${params.amount}`, 'parameter_invalid_integer', 'amount');
        // The provider's answer to 0 (or less): not its minimum charge (amount_too_small), a bad integer.
        if (amount < 1)
          throw invalid('This value must be greater than or equal to 1.', 'parameter_invalid_integer', 'amount');
        if (typeof params.currency !== 'string' || !/^[a-z]{3}$/.test(params.currency))
          throw invalid('Missing required param: currency.', 'parameter_missing', 'currency');
        if (amount < 50) throw invalid(`Amount must be at least 50 cents`, 'amount_too_small', 'amount');
        if (amount > 99_999_999) throw invalid('Amount must be no more than 999,999.99', 'amount_too_large', 'amount');
        const id = randomId('pi');
        const intent: Json = {
          id,
          object: 'payment_intent',
          amount,
          amount_received: 0,
          currency: params.currency,
          client_secret: `${id}_secret_${randomId('x', 25).slice(2)}`,
          created: now(),
          latest_charge: null,
          last_payment_error: null,
          livemode: false,
          metadata: (params.metadata as Json | undefined) ?? {},
          payment_method: null,
          status: 'requires_payment_method',
        };
        intents.set(id, intent);
        emit('payment_intent.created', intent, { idempotencyKey: key });
        return [200, intent];
      },
    ],
    [
      'GET',
      /^\/v1\/payment_intents\/search$/,
      (params) => {
        // The search language's one query the tools need: metadata['key']:'value'.
        const query = /^metadata\['(\w+)'\]:'([^']*)'$/.exec(String(params.query ?? ''));
        if (!query) throw invalid('Invalid search query', 'parameter_invalid_string', 'query');
        const data = [...intents.values()].filter((i) => (i.metadata as Json)[query[1]!] === query[2]);
        return [
          200,
          { object: 'search_result', data, has_more: false, next_page: null, url: '/v1/payment_intents/search' },
        ];
      },
    ],
    ['GET', /^\/v1\/payment_intents\/(pi_\w+)$/, (_p, m) => [200, intentOf(m[1]!)]],
    [
      'POST',
      /^\/v1\/payment_intents\/(pi_\w+)\/confirm$/,
      (params, m, key, publishable) => {
        const intent = intentOf(m[1]!);
        // With the publishable key (a browser), the intent's client secret is the credential.
        if (publishable && params.client_secret !== intent.client_secret) {
          throw invalid(
            'The client_secret provided does not match the client_secret associated with the PaymentIntent.',
            'payment_intent_invalid_parameter',
            'client_secret',
          );
        }
        if (intent.status !== 'requires_payment_method' && intent.status !== 'requires_confirmation')
          throw unexpectedState(intent, 'confirm');
        const method = String(params.payment_method ?? '');
        if (method !== SUCCEEDING_CARD && method !== DECLINED_CARD)
          throw invalid(`No such PaymentMethod: '${method}'`, 'resource_missing', 'payment_method');
        intent.payment_method = method;
        if (method === DECLINED_CARD) {
          const error = {
            type: 'card_error',
            code: 'card_declined',
            decline_code: 'generic_decline',
            message: 'Your card was declined.',
          };
          Object.assign(intent, { status: 'requires_payment_method', last_payment_error: error });
          emit('payment_intent.payment_failed', intent, { idempotencyKey: key });
          throw new ApiError(402, { ...error, payment_intent: intent });
        }
        const charge: Json = {
          id: randomId('ch'),
          object: 'charge',
          amount: intent.amount,
          amount_refunded: 0,
          currency: intent.currency,
          paid: true,
          payment_intent: intent.id,
          refunded: false,
          status: 'succeeded',
        };
        charges.set(charge.id as string, charge);
        Object.assign(intent, {
          status: 'succeeded',
          amount_received: intent.amount,
          latest_charge: charge.id,
          last_payment_error: null,
        });
        emit('charge.succeeded', charge, { idempotencyKey: key });
        emit('payment_intent.succeeded', intent, { idempotencyKey: key });
        return [200, intent];
      },
      true,
    ],
    [
      'POST',
      /^\/v1\/payment_intents\/(pi_\w+)\/cancel$/,
      (_p, m, key) => {
        const intent = intentOf(m[1]!);
        if (intent.status === 'succeeded' || intent.status === 'canceled') throw unexpectedState(intent, 'cancel');
        Object.assign(intent, { status: 'canceled', canceled_at: now() });
        emit('payment_intent.canceled', intent, { idempotencyKey: key });
        return [200, intent];
      },
    ],
    [
      'POST',
      /^\/v1\/refunds$/,
      (params, _m, key) => {
        if (typeof params.payment_intent !== 'string')
          throw invalid('Missing required param: payment_intent.', 'parameter_missing', 'payment_intent');
        const intent = intentOf(params.payment_intent);
        const charge = charges.get(String(intent.latest_charge));
        if (!charge) {
          throw invalid(
            `This PaymentIntent (${intent.id}) does not have a successful charge to refund.`,
            'charge_not_refundable',
          );
        }
        if (charge.refunded) {
          throw invalid(`Charge ${charge.id} has already been refunded.`, 'charge_already_refunded');
        }
        Object.assign(charge, { refunded: true, amount_refunded: charge.amount });
        const refund = {
          id: randomId('re'),
          object: 'refund',
          amount: charge.amount,
          charge: charge.id,
          currency: charge.currency,
          payment_intent: intent.id,
          status: 'succeeded',
        };
        emit('charge.refunded', charge, { idempotencyKey: key });
        emit('refund.created', refund, { idempotencyKey: key });
        return [200, refund];
      },
    ],
  ];

  function answer(res: ServerResponse, status: number, body: string, replayed = false) {
    res.writeHead(status, {
      'content-type': 'application/json',
      // Like the provider's API: browsers call it with the publishable key (the playground does).
      'access-control-allow-origin': '*',
      'request-id': randomId('req', 14),
      ...(replayed && { 'idempotent-replayed': 'true' }),
    });
    res.end(body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://localhost');
    const method = req.method ?? 'GET';
    const errorBody = (e: ApiError['body']) => JSON.stringify({ error: e }, null, 2);
    if (method === 'OPTIONS') {
      res.writeHead(204, {
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'GET, POST, DELETE',
        'access-control-allow-headers': 'authorization, content-type, idempotency-key, stripe-version',
        'access-control-max-age': '300',
      });
      return res.end();
    }
    if (outage) {
      return answer(
        res,
        outage,
        errorBody({ type: 'api_error', message: 'An unknown error occurred (stand-in outage)' }),
      );
    }
    const route = routes.find(([m, pattern]) => m === method && pattern.test(url.pathname));
    const publishable = req.headers.authorization === `Bearer ${keys.publishableKey}` && route?.[3] === true;
    if (req.headers.authorization !== `Bearer ${keys.secretKey}` && !publishable) {
      const given = /^Bearer (.*)$/.exec(req.headers.authorization ?? '')?.[1];
      return answer(
        res,
        401,
        errorBody({
          type: 'invalid_request_error',
          message: given
            ? `Invalid API Key provided: ${given.slice(0, 8)}${'*'.repeat(Math.max(0, given.length - 12))}${given.slice(-4)}`
            : "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').",
        }),
      );
    }
    if (!route) {
      return answer(
        res,
        404,
        errorBody({
          type: 'invalid_request_error',
          message: `Unrecognized request URL (${method}: ${url.pathname}).`,
        }),
      );
    }
    const params = method === 'GET' ? Object.fromEntries(url.searchParams) : formDecode(text);
    const key = method === 'POST' ? (req.headers['idempotency-key'] as string | undefined) : undefined;
    const fingerprint = `${method} ${url.pathname} ${text}`;
    if (key) {
      const earlier = idempotent.get(key);
      if (earlier && earlier.fingerprint !== fingerprint) {
        return answer(
          res,
          400,
          errorBody({
            type: 'idempotency_error',
            message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
          }),
        );
      }
      if (earlier) return answer(res, earlier.status, earlier.body, true);
    }
    let status: number;
    let body: string;
    try {
      const [ok, object] = route[2](params, route[1].exec(url.pathname)!, key, publishable);
      [status, body] = [ok, JSON.stringify(object, null, 2)];
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      [status, body] = [err.status, errorBody(err.body)];
    }
    if (key) idempotent.set(key, { fingerprint, status, body });
    if (method === 'POST') save();
    answer(res, status, body);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) answer(res, 500, JSON.stringify({ error: { type: 'api_error', message: String(err) } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  if (options.dataDir) {
    // Written whole, then renamed: a reader never sees half a file.
    await mkdir(options.dataDir, { recursive: true });
    const file = join(options.dataDir, LOCAL_PAYMENTS_FILE);
    const saved: LocalPaymentsFile = { ...keys, apiUrl: url };
    await writeFile(`${file}.tmp`, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 });
    await rename(`${file}.tmp`, file);
  }

  return {
    url,
    secretKey: keys.secretKey,
    publishableKey: keys.publishableKey,
    webhookSecret: keys.webhookSecret,
    events,
    deliveries,
    setWebhookUrl(target) {
      webhookUrl = target;
      void pump();
    },
    acknowledged(match) {
      return new Promise((resolve) => {
        const done = deliveries.find(
          (d) =>
            typeof d.status === 'number' &&
            d.status < 300 &&
            match(JSON.parse(events.find((e) => e.id === d.eventId)!.body) as Json),
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
    deliver(eventId) {
      const event = events.find((e) => e.id === eventId);
      if (!event) throw new Error(`No event ${eventId}`);
      return post(event);
    },
    setOutage(status) {
      outage = status;
    },
    async close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface PaymentAttempt {
  intentId: string;
  /** The intent's status after the attempt (`succeeded`, or `requires_payment_method` after a decline). */
  status: string;
  declined: boolean;
}

/**
 * Pays an order's intent as the customer's card would (what the provider's payment form does with
 * the client secret): finds the intent made for the order (by its metadata), and confirms it
 * with a card that pays or, with `fail`, one that is declined.
 */
export async function payOrder(
  provider: { apiUrl: string; secretKey: string },
  orderId: string,
  options: { fail?: boolean } = {},
): Promise<PaymentAttempt> {
  const call = async (method: string, path: string, form?: Record<string, string>) => {
    const res = await fetch(new URL(path, provider.apiUrl), {
      method,
      headers: {
        authorization: `Bearer ${provider.secretKey}`,
        ...(form && { 'content-type': 'application/x-www-form-urlencoded' }),
      },
      ...(form && { body: new URLSearchParams(form).toString() }),
    });
    return { status: res.status, body: (await res.json()) as Json };
  };
  const query = encodeURIComponent(`metadata['orderId']:'${orderId}'`);
  const found = await call('GET', `/v1/payment_intents/search?query=${query}`);
  const intent = (found.body.data as Json[] | undefined)?.[0];
  if (found.status !== 200 || !intent) throw new Error(`No payment intent for order ${orderId}`);
  const intentId = String(intent.id);
  const confirmed = await call('POST', `/v1/payment_intents/${intentId}/confirm`, {
    payment_method: options.fail ? DECLINED_CARD : SUCCEEDING_CARD,
  });
  if (confirmed.status === 402) {
    const error = confirmed.body.error as { payment_intent: Json };
    return { intentId, status: String(error.payment_intent.status), declined: true };
  }
  if (confirmed.status !== 200) {
    const error = confirmed.body.error as { message?: string } | undefined;
    throw new Error(`The payment was refused: ${error?.message ?? confirmed.status}`);
  }
  return { intentId, status: String(confirmed.body.status), declined: false };
}
