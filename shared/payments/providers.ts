import '../config/payments.ts';
import type { Config } from '../config.ts';
import { paymentKeysOf } from './payment-keys.ts';
import type { PaymentProvider } from './payment-provider.ts';
import { stripeProvider } from './stripe/provider.ts';
import { stripeWebhookContract } from './stripe/webhook-contract.ts';

// The one place the payment provider is chosen (docs/DECISIONS.md, Payment providers). Stripe is
// the only one: another is a folder beside ./stripe/ implementing PaymentProvider, registered here.

/** The payment provider of a configuration; undefined when it takes no payments (no keys). */
export function paymentProviderOf(settings: Config): PaymentProvider | undefined {
  const keys = paymentKeysOf(settings);
  if (!keys) return undefined;
  return stripeProvider({ keys, apiUrl: settings.PAYMENTS_API_URL, timeoutMs: settings.PAYMENTS_TIMEOUT_MS });
}

/** What the provider posts to POST /payments/webhook, for the OpenAPI document (built when asked). */
export const webhookContract = stripeWebhookContract;
