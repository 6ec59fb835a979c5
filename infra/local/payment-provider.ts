import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { ApiError, formDecode, paymentRoutes } from './payment-stand-in/routes.ts';
import {
  DECLINED_CARD,
  type Json,
  keysIn,
  loadState,
  LOCAL_PAYMENTS_FILE,
  type LocalPaymentsFile,
  type ProviderEvent,
  randomId,
  SUCCEEDING_CARD,
} from './payment-stand-in/state.ts';
import { DEFAULT_RETRY_DELAYS_MS, type Delivery, webhookSender } from './payment-stand-in/webhooks.ts';

// A loopback stand-in of the payment provider (Stripe's API), for npm start and the tests: what
// the service and `npm run pay` call, on the provider's wire protocol. Form-encoded requests with
// a bearer secret key; Idempotency-Key on writes (a replay answers the first response again, with
// `Idempotent-Replayed: true`; the same key with other parameters is an `idempotency_error`);
// errors as `{ error: { type, code, message } }` with the provider's statuses (400, 401, 402, 404,
// 500); and every event signed (Stripe-Signature) and posted to the service's webhook, retried
// while the service does not answer 2xx. Cards are the provider's test payment methods:
// `pm_card_visa` pays, `pm_card_chargeDeclined` is declined.
//
// With a DATA_DIR (npm start), its keys and state are kept there (payment-stand-in/state.ts): a
// restart loses no payment, and delivers what it had not delivered. Its routes are in
// payment-stand-in/routes.ts, its events' delivery in payment-stand-in/webhooks.ts.

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

export async function startPaymentProvider(options: PaymentProviderOptions = {}): Promise<PaymentProviderStandIn> {
  const keys = await keysIn(options.dataDir);
  const state = await loadState(options.dataDir);
  const webhooks = webhookSender(state, keys.webhookSecret, options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS);
  const routes = paymentRoutes(state, webhooks.emit);
  const { idempotent } = state;
  let outage: number | undefined;

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
    if (method === 'POST') state.save();
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
    events: webhooks.events,
    deliveries: webhooks.deliveries,
    setWebhookUrl: webhooks.setWebhookUrl,
    acknowledged: webhooks.acknowledged,
    pauseDeliveries: webhooks.pauseDeliveries,
    resumeDeliveries: webhooks.resumeDeliveries,
    deliver: webhooks.deliver,
    setOutage(status) {
      outage = status;
    },
    async close() {
      webhooks.close();
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
