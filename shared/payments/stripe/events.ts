import * as z from '../../zod.ts';
import { InvalidInputError } from '../../errors.ts';
import type { PaymentEvent, PaymentEventKind } from '../payment-provider.ts';
import { verifySignature } from './signature.ts';

// A webhook delivery from Stripe: verified against its signature first (nothing in an unsigned
// body is read), then read as an event and translated into the service's words. Only what the
// service acts upon is read: the event's id and type, and the payment intent it is about (the
// object itself for payment_intent.* events, the charge's `payment_intent` for charge.* events).

const eventSchema = z.object({
  id: z.string().check(z.minLength(1), z.maxLength(255)),
  type: z.string().check(z.minLength(1), z.maxLength(255)),
  data: z.object({
    object: z.object({
      object: z.optional(z.string()),
      id: z.optional(z.string()),
      payment_intent: z.optional(z.nullable(z.string())),
      /** On a charge: true once it is refunded in full. */
      refunded: z.optional(z.boolean()),
    }),
  }),
});

/** Stripe's event types the service acts upon, and what each says happened to the payment. */
export const STRIPE_EVENT_KINDS = {
  'payment_intent.succeeded': 'succeeded',
  'payment_intent.payment_failed': 'failed',
  'payment_intent.canceled': 'canceled',
  // charge.refunded reports partial refunds too: the charge's `refunded` tells a full one.
  'charge.refunded': 'refunded',
} as const satisfies Record<string, PaymentEventKind>;

const isKnown = (type: string): type is keyof typeof STRIPE_EVENT_KINDS => Object.hasOwn(STRIPE_EVENT_KINDS, type);

/** The event in a signed delivery; InvalidSignatureError (400) when unsigned, wrongly signed or stale, InvalidInputError when not an event. */
export function verifiedEvent(
  rawBody: Buffer,
  signature: string | undefined,
  secret: string,
  nowSeconds: number,
): PaymentEvent {
  verifySignature(rawBody, signature, secret, nowSeconds);
  let json: unknown;
  try {
    json = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new InvalidInputError(
      'The webhook body is not JSON',
      [{ path: 'body', message: 'Not JSON' }],
      'MALFORMED_JSON',
    );
  }
  const parsed = eventSchema.safeParse(json);
  if (!parsed.success) {
    throw new InvalidInputError('The webhook body is not an event', [{ path: 'body', message: 'Not an event' }]);
  }
  return translated(parsed.data);
}

function translated({ id: eventId, type, data: { object } }: z.infer<typeof eventSchema>): PaymentEvent {
  const paymentId = object.object === 'payment_intent' ? object.id : (object.payment_intent ?? undefined);
  if (!isKnown(type) || !paymentId) return { eventId, kind: 'other' };
  const kind = STRIPE_EVENT_KINDS[type];
  if (kind === 'refunded' && object.refunded !== true) return { eventId, kind: 'partially_refunded', paymentId };
  return { eventId, kind, paymentId };
}
