import * as z from '../../zod.ts';
import { sleep } from '../../clock.ts';
import { DependencyUnavailableError, asError } from '../../errors.ts';

// Stripe's REST API, spoken with fetch: form-encoded requests, a bearer secret key, an
// Idempotency-Key on every write, and its error body `{ error: { type, code, message } }`. A small
// client instead of the `stripe` package: the three calls below are all the service makes
// (docs/DECISIONS.md, Payments: a small client).
//
// Failures: unreachable, timing out, answering 5xx or 429 (after RETRIES attempts with the same
// idempotency key, so a retry never makes a second intent or refund): DependencyUnavailableError;
// any other answer but a 2xx: StripeRequestError with its error body (./provider.ts reads it).

const RETRIES = 2;
const RETRY_DELAY_MS = 200;

export interface StripeApiSettings {
  /** e.g. https://api.stripe.com (the local stand-in's URL under npm start). */
  baseUrl: string;
  secretKey: () => Promise<string>;
  timeoutMs: number;
}

const intentSchema = z.object({
  id: z.string(),
  client_secret: z.string(),
  status: z.string(),
  amount: z.number(),
  currency: z.string(),
});
export type StripeIntent = z.infer<typeof intentSchema>;

const refundSchema = z.object({ id: z.string(), status: z.nullable(z.string()) });

const errorBodySchema = z.object({
  error: z.object({
    type: z.optional(z.string()),
    code: z.optional(z.string()),
    message: z.optional(z.string()),
    // An intent in the wrong state for the call: the provider names its current one.
    payment_intent: z.optional(z.object({ status: z.string() })),
  }),
});
type StripeErrorBody = z.infer<typeof errorBodySchema>['error'];

/** A 4xx the provider answered, with its error body (what the caller may act upon). */
export class StripeRequestError extends Error {
  constructor(
    readonly status: number,
    readonly error: StripeErrorBody,
  ) {
    super(`Payment provider answered ${status}: ${error.code ?? error.type ?? 'error'}: ${error.message ?? ''}`);
    this.name = 'StripeRequestError';
  }
}

/** `metadata[orderId]=…` form encoding of nested parameters, as the provider reads them. */
export function formEncode(params: Record<string, string | number | Record<string, string>>): string {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (typeof value === 'object') for (const [k, v] of Object.entries(value)) form.append(`${key}[${k}]`, v);
    else form.append(key, String(value));
  }
  return form.toString();
}

const retryable = (status: number) => status === 429 || status >= 500;

export class StripeApi {
  constructor(private readonly settings: StripeApiSettings) {}

  /** A payment intent for `amountCents` in `currency`, made once per idempotency key. */
  async createIntent(input: {
    amountCents: number;
    currency: string;
    orderId: string;
    idempotencyKey: string;
  }): Promise<StripeIntent> {
    const body = await this.post(
      '/v1/payment_intents',
      {
        amount: input.amountCents,
        currency: input.currency.toLowerCase(),
        'automatic_payment_methods[enabled]': 'true',
        metadata: { orderId: input.orderId },
      },
      input.idempotencyKey,
    );
    return z.parse(intentSchema, body);
  }

  /** Cancels an intent that was not paid; an intent already canceled counts as done. */
  async cancelIntent(intentId: string, idempotencyKey: string): Promise<void> {
    try {
      await this.post(`/v1/payment_intents/${encodeURIComponent(intentId)}/cancel`, {}, idempotencyKey);
    } catch (err) {
      if (err instanceof StripeRequestError && err.error.payment_intent?.status === 'canceled') return;
      throw err;
    }
  }

  /** Refunds what was paid on an intent, once per idempotency key; an intent already refunded counts as done. */
  async refund(intentId: string, idempotencyKey: string): Promise<void> {
    try {
      z.parse(refundSchema, await this.post('/v1/refunds', { payment_intent: intentId }, idempotencyKey));
    } catch (err) {
      if (err instanceof StripeRequestError && err.error.code === 'charge_already_refunded') return;
      throw err;
    }
  }

  private async post(
    path: string,
    params: Record<string, string | number | Record<string, string>>,
    idempotencyKey: string,
  ): Promise<unknown> {
    const url = new URL(path, this.settings.baseUrl);
    const headers = {
      authorization: `Bearer ${await this.settings.secretKey()}`,
      'content-type': 'application/x-www-form-urlencoded',
      'idempotency-key': idempotencyKey,
    };
    let lastFailure = '';
    for (let attempt = 0; attempt <= RETRIES; attempt++) {
      if (attempt > 0) await sleep(RETRY_DELAY_MS * 2 ** (attempt - 1));
      let res: Response;
      try {
        res = await fetch(url, {
          method: 'POST',
          headers,
          body: formEncode(params),
          signal: AbortSignal.timeout(this.settings.timeoutMs),
        });
      } catch (err) {
        lastFailure = asError(err).name === 'TimeoutError' ? 'timed out' : 'could not be reached';
        continue;
      }
      const text = await res.text();
      if (res.ok) return JSON.parse(text) as unknown;
      if (retryable(res.status)) {
        lastFailure = `answered ${res.status}`;
        continue;
      }
      throw providerError(res.status, text);
    }
    throw new DependencyUnavailableError(`The payment provider ${lastFailure}; nothing was charged, try again`, 5);
  }
}

function providerError(status: number, text: string): Error {
  let parsed: ReturnType<typeof errorBodySchema.safeParse> | undefined;
  try {
    parsed = errorBodySchema.safeParse(JSON.parse(text));
  } catch {
    // not JSON: no details
  }
  const error: StripeErrorBody = parsed?.success ? parsed.data.error : {};
  return new StripeRequestError(status, error);
}
