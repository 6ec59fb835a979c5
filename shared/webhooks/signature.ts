import { createHmac, randomBytes } from 'node:crypto';

// Standard Webhooks signatures (docs/DECISIONS.md "Webhooks"): the secret is `whsec_` and the
// base64 of 32 random bytes; a delivery carries `webhook-id`, `webhook-timestamp` (Unix seconds)
// and `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed by the
// secret's decoded bytes. A receiver checks it with any Standard Webhooks library.

const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

export const newWebhookSecret = () => `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;

/** The signature header's value of one attempt. */
export function webhookSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`, 'utf8').digest('base64');
  return `v1,${mac}`;
}

/** The headers of one attempt: the same webhook-id on every attempt, a fresh timestamp and signature. */
export function signedHeaders(secret: string, id: string, timestampSeconds: number, body: string) {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': webhookSignature(secret, id, timestampSeconds, body),
  };
}
