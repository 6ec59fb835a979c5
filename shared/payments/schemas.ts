// The payment provider's webhook: what it posts (read from the raw body once its signature is
// checked, shared/payments/provider-events.ts) and what it is answered.

export const WEBHOOK_OUTCOMES = ['applied', 'already-applied', 'ignored'] as const;
/** What became of an event: acted upon (now or before), or acknowledged and ignored. */
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];
