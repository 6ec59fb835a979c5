import * as z from '../zod.ts';
import { settingsPiece } from './core.ts';
import { int, str } from './fields.ts';

// Payments (orders and the payment webhook).

export const paymentSettings = settingsPiece(
  {
    // Payments (the provider's API; unset: the provider's own, shared/payments/providers.ts): the
    // secret key and webhook secret from the environment (npm start sets them from
    // DATA_DIR/local-payments.json), or from Secrets Manager when deployed (a JSON secret
    // { "secretKey", "webhookSecret" }). None of them: orders carry `payment: null`.
    PAYMENTS_API_URL: z.optional(z.url({ protocol: /^https?$/ })),
    PAYMENTS_SECRET_KEY: z.optional(str()),
    PAYMENTS_WEBHOOK_SECRET: z.optional(str()),
    PAYMENTS_SECRET_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
    PAYMENTS_TIMEOUT_MS: z._default(int(500, 60_000), 10_000),
  },
  (settings) => [
    ...(settings.PAYMENTS_SECRET_KEY && !settings.PAYMENTS_WEBHOOK_SECRET
      ? ['PAYMENTS_SECRET_KEY: needs PAYMENTS_WEBHOOK_SECRET too (both, or neither)']
      : []),
    ...(settings.PAYMENTS_WEBHOOK_SECRET && !settings.PAYMENTS_SECRET_KEY
      ? ['PAYMENTS_WEBHOOK_SECRET: needs PAYMENTS_SECRET_KEY too (both, or neither)']
      : []),
  ],
);
