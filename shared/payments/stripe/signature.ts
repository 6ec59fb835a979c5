import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidSignatureError } from '../payment-provider.ts';

// Stripe's webhook signature (Stripe-Signature: `t=<unix seconds>,v1=<hex>[,v1=<hex>…]`):
// HMAC-SHA256 of `"{t}.{raw body}"` with the webhook secret. Several v1 values are sent while a
// secret is being rolled; any one of them matching is enough. The timestamp is signed with the
// body, so a captured request cannot be replayed after TOLERANCE_SECONDS.

export const SIGNATURE_TOLERANCE_SECONDS = 300;

/** The (lower-cased) header that carries the signature. */
export const SIGNATURE_HEADER = 'stripe-signature';

const refused = (message: string) => new InvalidSignatureError(message, SIGNATURE_HEADER);

/** The header value for `rawBody` signed at `timestamp` (seconds) with `secret` (the stand-in and tests sign with it). */
export function signatureHeader(rawBody: Buffer | string, secret: string, timestamp: number): string {
  return `t=${timestamp},v1=${hmac(secret, timestamp, rawBody)}`;
}

function hmac(secret: string, timestamp: number | string, rawBody: Buffer | string): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex');
}

/**
 * Throws InvalidSignatureError (a 400) unless `header` signs `rawBody` with `secret` within the
 * tolerance of `nowSeconds`. The comparison takes the same time whatever the bytes.
 */
export function verifySignature(rawBody: Buffer, header: string | undefined, secret: string, nowSeconds: number): void {
  if (!header) throw refused('Missing Stripe-Signature header');
  let timestamp: string | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === 't') timestamp = value;
    else if (key === 'v1' && value) signatures.push(value);
  }
  if (!timestamp || !/^\d{1,12}$/.test(timestamp) || !signatures.length) {
    throw refused('Malformed Stripe-Signature header: expected t=<timestamp>,v1=<signature>');
  }
  const expected = Buffer.from(hmac(secret, timestamp, rawBody), 'hex');
  const matches = signatures.some((candidate) => {
    const given = Buffer.from(/^[0-9a-f]{64}$/i.test(candidate) ? candidate : '', 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw refused('Stripe-Signature does not match the body');
  if (Math.abs(nowSeconds - Number(timestamp)) > SIGNATURE_TOLERANCE_SECONDS) {
    throw refused(`Stripe-Signature timestamp is more than ${SIGNATURE_TOLERANCE_SECONDS} seconds from now`);
  }
}
