import * as z from '../zod.ts';
import { settingsPiece } from './core.ts';
import { bool, int, str } from './fields.ts';

// Webhooks (shared/webhooks/, docs/DECISIONS.md "Webhooks").

export const webhookSettings = settingsPiece({
  // The delivery queue (set by the stack and the local runtime, as the pipeline's).
  WEBHOOK_QUEUE_URL: z.optional(str()),
  // Seconds between a failed delivery and each next attempt, in order; after the last, the
  // delivery is recorded failed (the default spans a little over a day).
  WEBHOOK_RETRY_DELAYS_S: z._default(
    z.pipe(
      z.string().check(z.regex(/^\s*\d{1,6}(\s*,\s*\d{1,6}){0,19}\s*$/, 'Must be 1 to 20 comma-separated seconds')),
      z.transform((v) => v.split(',').map((n) => Number(n.trim()))),
    ),
    [5, 300, 1800, 7200, 18000, 36000, 36000],
  ),
  // One attempt's deadline (connect, send, answer), under the delivery function's timeout.
  WEBHOOK_TIMEOUT_MS: z._default(int(100, 20_000), 10_000),
  WEBHOOKS_MAX_PER_USER: z._default(int(1, 1_000), 10),
  // Loopback receivers (the local runtime and tests only; the stack sets false), as PDF_ALLOW_LOOPBACK.
  WEBHOOK_ALLOW_LOOPBACK: z._default(bool, false),
});
