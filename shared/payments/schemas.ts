// The payment provider's webhook: what it is answered (the chosen provider's events are read from
// the raw body once their signature is checked; their contract is in contracts.ts).

export const WEBHOOK_OUTCOMES = ['applied', 'already-applied', 'ignored'] as const;
/** What became of an event: acted upon (now or before), or acknowledged and ignored. */
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];
