import * as z from '../zod.ts';
import { InvalidInputError } from '../errors.ts';
import { verifySignature } from './webhook-signature.ts';

// A webhook delivery from the payment provider: verified against its signature first (nothing
// in an unsigned body is read), then read as an event. Only what the service acts upon is read:
// the event's id and type, and the payment intent it is about (the object itself for
// payment_intent.* events, the charge's `payment_intent` for charge.* events).

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

export interface ProviderEvent {
  id: string;
  type: string;
  /** The payment intent the event is about; undefined when it is about none. */
  intentId: string | undefined;
  /** A charge refunded in full (charge.refunded also reports partial refunds). */
  fullyRefunded: boolean;
}

/** The event in a signed delivery; InvalidInputError (400) when unsigned, wrongly signed, stale or not an event. */
export function verifiedEvent(
  rawBody: Buffer,
  signature: string | undefined,
  secret: string,
  nowSeconds: number,
): ProviderEvent {
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
  const { id, type, data } = parsed.data;
  const object = data.object;
  const intentId = object.object === 'payment_intent' ? object.id : (object.payment_intent ?? undefined);
  return { id, type, intentId, fullyRefunded: object.refunded === true };
}
