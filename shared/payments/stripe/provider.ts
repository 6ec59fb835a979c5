import { DependencyFailedError } from '../../errors.ts';
import type { PaymentKeys } from '../payment-keys.ts';
import { AmountRefusedError, type PaymentProvider } from '../payment-provider.ts';
import { StripeApi, StripeRequestError } from './api.ts';
import { verifiedEvent } from './events.ts';
import { SIGNATURE_HEADER } from './signature.ts';

// Stripe behind the service's PaymentProvider: a payment is a payment intent, its events are
// Stripe's signed events (docs/DECISIONS.md, Payment providers).

export const STRIPE_API_URL = 'https://api.stripe.com';

export interface StripeSettings {
  /** The provider's keys, read once. */
  keys: () => Promise<PaymentKeys>;
  /** Stripe's API unless given (the local stand-in's URL under npm start). */
  apiUrl: string | undefined;
  timeoutMs: number;
}

export function stripeProvider({ keys, apiUrl, timeoutMs }: StripeSettings): PaymentProvider {
  const api = new StripeApi({
    baseUrl: apiUrl ?? STRIPE_API_URL,
    secretKey: async () => (await keys()).secretKey,
    timeoutMs,
  });
  return {
    async createPayment(input) {
      const intent = await api.createIntent(input).catch((err: unknown) => {
        throw neutralErrorOf(err);
      });
      return { paymentId: intent.id, clientSecret: intent.client_secret };
    },
    cancelPayment: (paymentId, idempotencyKey) => api.cancelIntent(paymentId, idempotencyKey),
    refundPayment: (paymentId, idempotencyKey) => api.refund(paymentId, idempotencyKey),
    async verifyAndTranslate({ headers, rawBody }, now) {
      const { webhookSecret } = await keys();
      return verifiedEvent(rawBody, headers[SIGNATURE_HEADER], webhookSecret, Math.floor(now.getTime() / 1000));
    },
  };
}

/** Stripe's refusal in the service's terms: an amount out of its bounds, or a request it refused (a wrong key). */
function neutralErrorOf(err: unknown): unknown {
  if (!(err instanceof StripeRequestError)) return err;
  const { code, message } = err.error;
  if (code === 'amount_too_small' || code === 'amount_too_large') {
    return new AmountRefusedError(code === 'amount_too_small' ? 'too_small' : 'too_large', message ?? code);
  }
  return new DependencyFailedError(`The payment provider refused the request (${code ?? err.status})`);
}
