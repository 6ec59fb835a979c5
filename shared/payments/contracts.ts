import * as z from '../zod.ts';
import type { NamedSchemas, RouteContracts } from '../openapi/contract.ts';
import { example } from '../openapi/examples.ts';
import { WEBHOOK_OUTCOMES } from './schemas.ts';

// The OpenAPI contracts of the payments routes (infra/openapi.ts alone imports this file, so no
// function bundle builds them): the schemas the document names, and what it says of each route.

const providerEventSchema = z
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
  );

const webhookReceiptSchema = z
  .object({ eventId: z.string(), outcome: z.enum(WEBHOOK_OUTCOMES) })
  .check(example({ eventId: 'evt_1NG8Du2eZvKYlo2CUI79vXWy', outcome: 'applied' }));

export const schemas: NamedSchemas = {
  PaymentProviderEvent: providerEventSchema,
  WebhookReceipt: webhookReceiptSchema,
};

export const contracts: RouteContracts = {
  'payment-webhook': {
    summary: "The payment provider's events (no sign-in; signed)",
    description:
      'No Authorization: the Stripe-Signature header (t=…,v1=…; HMAC-SHA256 of "{t}.{body}" with the webhook secret, within 5 minutes) is checked over the raw body; ' +
      'a missing, wrong or stale signature is a 400. payment_intent.succeeded marks the payment paid and moves a New order to Processing; ' +
      'payment_intent.payment_failed marks it failed; payment_intent.canceled cancels a New order; charge.refunded (in full) marks it refunded, also when it arrives before its success (the late success then changes nothing). ' +
      'Each event is applied once; a late or repeated one never moves an order back; other events and unknown intents are acknowledged (200, ignored).',
    body: providerEventSchema,
    responses: { 200: webhookReceiptSchema },
    errors: [400, 404, 413],
  },
};
