import { InvalidInputError } from '../errors.ts';

// What the service asks of a payment provider, in its own words (docs/DECISIONS.md, Payment
// providers). Each provider lives in a folder of its own under shared/payments/ and is chosen in
// shared/payments/providers.ts; its API, event names, signature scheme and status words stay there.
//
// Failures of the calls, as a provider reports them:
// - unreachable, timing out, overloaded (after its retries under the same idempotency key):
//   DependencyUnavailableError (503);
// - an amount it cannot take: AmountRefusedError, which the order turns into the client's 400;
// - anything else it refused: DependencyFailedError (502).

/** A payment made for an order: the provider's id for it, and what the client's payment form needs. */
export interface CreatedPayment {
  paymentId: string;
  clientSecret: string;
}

/** What a provider's event says happened to a payment. */
export const PAYMENT_EVENT_KINDS = ['succeeded', 'failed', 'canceled', 'refunded', 'partially_refunded'] as const;
export type PaymentEventKind = (typeof PAYMENT_EVENT_KINDS)[number];

/**
 * A verified event, provider-neutral. `other`: an event about something the service does not
 * track (another kind of event, or one about no payment); it is acknowledged all the same.
 */
export type PaymentEvent =
  | { eventId: string; kind: PaymentEventKind; paymentId: string }
  | { eventId: string; kind: 'other' };

/** A webhook delivery as received: lower-cased headers and the body's exact bytes (what is signed). */
export interface WebhookDelivery {
  headers: Record<string, string | undefined>;
  rawBody: Buffer;
}

export interface PaymentProvider {
  /** A payment of `amountCents` in `currency` for an order, made once per idempotency key. */
  createPayment(input: {
    orderId: string;
    amountCents: number;
    currency: string;
    idempotencyKey: string;
  }): Promise<CreatedPayment>;
  /** Cancels a payment that was not made; one already canceled counts as done. */
  cancelPayment(paymentId: string, idempotencyKey: string): Promise<void>;
  /** Refunds what was paid, once per idempotency key; a payment already refunded counts as done. */
  refundPayment(paymentId: string, idempotencyKey: string): Promise<void>;
  /**
   * The event in a delivery, once its signature is checked (nothing in an unsigned body is read):
   * InvalidSignatureError when it is unsigned, wrongly signed or stale at `now`; InvalidInputError
   * when a signed body is not an event.
   */
  verifyAndTranslate(delivery: WebhookDelivery, now: Date): Promise<PaymentEvent>;
}

/** A webhook delivery whose signature is missing, malformed, wrong or stale (a 400 naming the header). */
export class InvalidSignatureError extends InvalidInputError {
  constructor(message: string, header: string) {
    super(message, [{ path: `headers.${header}`, message }], 'INVALID_SIGNATURE');
  }
}

/** The provider cannot take the amount: below its minimum charge, or above its maximum. */
export class AmountRefusedError extends Error {
  constructor(
    readonly limit: 'too_small' | 'too_large',
    message: string,
  ) {
    super(message);
    this.name = 'AmountRefusedError';
  }
}
