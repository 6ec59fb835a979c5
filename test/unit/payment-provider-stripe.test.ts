import { InvalidInputError } from '#shared/errors.ts';
import { httpErrorOf } from '#shared/http/errors.ts';
import { paymentStatusAfter } from '#shared/orders/payment-status.ts';
import {
  InvalidSignatureError,
  PAYMENT_EVENT_KINDS,
  type PaymentEvent,
  type PaymentProvider,
} from '#shared/payments/payment-provider.ts';
import { stripeProvider } from '#shared/payments/stripe/provider.ts';
import { signatureHeader } from '#shared/payments/stripe/signature.ts';

// Stripe behind PaymentProvider: each event the service acts upon comes out in the service's words
// (docs/DECISIONS.md, Payment providers), and a delivery not signed with the webhook secret comes out
// as InvalidSignatureError before its body is read. Nothing here reaches the network: verifying and
// translating is local.

const SECRET = 'whsec_unit_test';
const NOW = new Date('2026-12-02T01:30:00Z');
const nowSeconds = Math.floor(NOW.getTime() / 1000);

const provider: PaymentProvider = stripeProvider({
  keys: async () => ({ secretKey: 'sk_test_unused', webhookSecret: SECRET }),
  apiUrl: 'http://127.0.0.1:9', // never called here
  timeoutMs: 1000,
});

const intentEvent = (id: string, type: string, intentId = 'pi_123') =>
  JSON.stringify({ id, object: 'event', type, data: { object: { id: intentId, object: 'payment_intent' } } });
const chargeEvent = (id: string, refunded: boolean, intentId: string | null = 'pi_123') =>
  JSON.stringify({
    id,
    object: 'event',
    type: 'charge.refunded',
    data: { object: { id: 'ch_1', object: 'charge', payment_intent: intentId, refunded } },
  });

const signed = (body: string, secret = SECRET, at = nowSeconds) => ({
  headers: { 'content-type': 'application/json', 'stripe-signature': signatureHeader(body, secret, at) },
  rawBody: Buffer.from(body),
});

test.each<[string, string, PaymentEvent]>([
  [
    'payment_intent.succeeded',
    intentEvent('evt_1', 'payment_intent.succeeded'),
    { eventId: 'evt_1', kind: 'succeeded', paymentId: 'pi_123' },
  ],
  [
    'payment_intent.payment_failed',
    intentEvent('evt_2', 'payment_intent.payment_failed'),
    { eventId: 'evt_2', kind: 'failed', paymentId: 'pi_123' },
  ],
  [
    'payment_intent.canceled',
    intentEvent('evt_3', 'payment_intent.canceled'),
    { eventId: 'evt_3', kind: 'canceled', paymentId: 'pi_123' },
  ],
  ['charge.refunded in full', chargeEvent('evt_4', true), { eventId: 'evt_4', kind: 'refunded', paymentId: 'pi_123' }],
  [
    'charge.refunded in part',
    chargeEvent('evt_5', false),
    { eventId: 'evt_5', kind: 'partially_refunded', paymentId: 'pi_123' },
  ],
  [
    'an event the service does not act upon',
    intentEvent('evt_6', 'payment_intent.created'),
    { eventId: 'evt_6', kind: 'other' },
  ],
  ['a refund of a charge without an intent', chargeEvent('evt_7', true, null), { eventId: 'evt_7', kind: 'other' }],
])('%s → its neutral event', async (_what, body, expected) => {
  expect(await provider.verifyAndTranslate(signed(body), NOW)).toEqual(expected);
});

test('every neutral kind but a partial refund asks the order for a payment status', () => {
  expect(Object.fromEntries(PAYMENT_EVENT_KINDS.map((kind) => [kind, paymentStatusAfter(kind)]))).toEqual({
    succeeded: 'paid',
    failed: 'failed',
    canceled: 'canceled',
    refunded: 'refunded',
    partially_refunded: undefined,
  });
});

describe('a delivery not signed with the webhook secret is InvalidSignatureError, a 400 naming the header', () => {
  const body = intentEvent('evt_8', 'payment_intent.succeeded');
  const good = signed(body);
  test.each([
    ['no header', { headers: {}, rawBody: good.rawBody }, /Missing Stripe-Signature/],
    ['a malformed header', { headers: { 'stripe-signature': 'v1=abc' }, rawBody: good.rawBody }, /Malformed/],
    ['another secret', signed(body, 'whsec_someone_else'), /does not match/],
    [
      'an altered body',
      { headers: good.headers, rawBody: Buffer.from(body.replace('evt_8', 'evt_9')) },
      /does not match/,
    ],
    ['a stale signature (6 minutes old)', signed(body, SECRET, nowSeconds - 360), /more than 300 seconds/],
  ])('%s', async (_what, delivery, message) => {
    const error = await provider.verifyAndTranslate(delivery, NOW).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(InvalidSignatureError);
    expect((error as Error).message).toMatch(message);
    expect(httpErrorOf(error)).toMatchObject({
      statusCode: 400,
      details: { code: 'INVALID_SIGNATURE', errors: [expect.objectContaining({ path: 'headers.stripe-signature' })] },
    });
  });
});

test('a signed body that is not an event is a 400 of its own, not a signature error', async () => {
  for (const body of ['not json', JSON.stringify({ id: 'evt_10' })]) {
    const error = await provider.verifyAndTranslate(signed(body), NOW).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).not.toBeInstanceOf(InvalidSignatureError);
  }
});
