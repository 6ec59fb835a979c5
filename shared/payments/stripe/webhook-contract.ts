import * as z from '../../zod.ts';
import { example } from '../../openapi/examples.ts';

// What Stripe posts to POST /payments/webhook, as the OpenAPI document describes it. Built when
// asked (by shared/payments/schemas.ts), so that the functions' bundles leave it out.

/** The webhook's body schema and description (one call: the document names the schema once). */
export const stripeWebhookContract = () => ({
  body: z
    .looseObject({
      id: z.string(),
      type: z.string(),
      data: z.looseObject({ object: z.looseObject({}) }),
    })
    .check(
      z.describe(
        "An event of the provider (Stripe's event object), signed in the Stripe-Signature header over the exact bytes of the body",
      ),
      example({
        id: 'evt_1NG8Du2eZvKYlo2CUI79vXWy',
        object: 'event',
        type: 'payment_intent.succeeded',
        created: 1764149400,
        data: { object: { id: 'pi_3MtwBwLkdIwHu7ix28a3tqPa', object: 'payment_intent', status: 'succeeded' } },
      }),
    ),
  description:
    'No Authorization: the Stripe-Signature header (t=…,v1=…; HMAC-SHA256 of "{t}.{body}" with the webhook secret, within 5 minutes) is checked over the raw body; ' +
    'a missing, wrong or stale signature is a 400. payment_intent.succeeded marks the payment paid and moves a New order to Processing; ' +
    'payment_intent.payment_failed marks it failed; payment_intent.canceled cancels a New order; charge.refunded (in full) marks it refunded, also when it arrives before its success (the late success then changes nothing). ' +
    'Each event is applied once; a late or repeated one never moves an order back; other events and unknown intents are acknowledged (200, ignored).',
});
