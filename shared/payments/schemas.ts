import * as z from '../zod.ts';
import type { NamedSchemas, RouteContracts } from '../openapi/contract.ts';
import { example } from '../openapi/examples.ts';
import { webhookContract } from './providers.ts';

// The payment provider's webhook: what it posts (the chosen provider's events, read from the raw
// body once their signature is checked) and what it is answered.

export const WEBHOOK_OUTCOMES = ['applied', 'already-applied', 'ignored'] as const;
/** What became of an event: acted upon (now or before), or acknowledged and ignored. */
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];

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
