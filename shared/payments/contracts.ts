import * as z from '../zod.ts';
import type { NamedSchemas, RouteContracts } from '../openapi/contract.ts';
import { example } from '../openapi/examples.ts';
import { webhookContract } from './providers.ts';
import { WEBHOOK_OUTCOMES } from './schemas.ts';

// The OpenAPI contracts of the payments routes (infra/openapi.ts alone imports this file, so no
// function bundle builds them): the schemas the document names, and what it says of each route.

const webhook = webhookContract();

const webhookReceiptSchema = z
  .object({ eventId: z.string(), outcome: z.enum(WEBHOOK_OUTCOMES) })
  .check(example({ eventId: 'evt_1NG8Du2eZvKYlo2CUI79vXWy', outcome: 'applied' }));

export const schemas: NamedSchemas = {
  PaymentProviderEvent: webhook.body,
  WebhookReceipt: webhookReceiptSchema,
};

export const contracts: RouteContracts = {
  'payment-webhook': {
    summary: "The payment provider's events (no sign-in; signed)",
    description: webhook.description,
    body: webhook.body,
    responses: { 200: webhookReceiptSchema },
    errors: [400, 404, 413],
  },
};
