import type { PaymentEventKind } from '../payments/payment-provider.ts';
import type { OrderStatus } from './order-status.ts';

// An order's payment, and how the provider's events (in the service's words, whatever the
// provider: shared/payments/payment-provider.ts) move it (docs/DECISIONS.md, Payments).
//
//   requires_payment ─ failed ⇄ (another attempt) ─┬─ paid ── refunded
//                                                   └─ canceled
//
// A payment only moves forward: `failed` may still become `paid` (the customer tries another
// card), but nothing comes after `paid` except `refunded`, and `canceled` and `refunded` are
// final. So an event that arrives late or twice (the provider retries and does not keep order)
// finds the payment past it and changes nothing.
//
// A full refund is the last word, whenever it arrives: money refunded was taken, so the refund
// stands for the success too, and a success delivered after it finds the payment past it. The
// order ends where success-then-refund leaves it, whichever came first (docs/DECISIONS.md,
// Payments: events in any order).

export const PAYMENT_STATUSES = ['requires_payment', 'failed', 'paid', 'refunded', 'canceled'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/**
 * What each kind of payment event asks of the payment; a kind not listed (a partial refund: the
 * order stays paid) changes nothing. The payment statuses are the service's own, what clients see.
 */
const STATUS_AFTER: Partial<Record<PaymentEventKind, PaymentStatus>> = {
  succeeded: 'paid',
  failed: 'failed',
  canceled: 'canceled',
  refunded: 'refunded',
};

/** The payment status an event of `kind` asks for; undefined when the service does not act on it. */
export const paymentStatusAfter = (kind: PaymentEventKind): PaymentStatus | undefined => STATUS_AFTER[kind];

const FROM: Record<PaymentStatus, readonly PaymentStatus[]> = {
  requires_payment: [],
  failed: ['requires_payment', 'failed'],
  paid: ['requires_payment', 'failed'],
  refunded: ['requires_payment', 'failed', 'paid'],
  canceled: ['requires_payment', 'failed'],
};

/** Whether a payment in `from` moves to `to` (false: the event is late, repeated or impossible). */
export const paymentMoves = (from: PaymentStatus, to: PaymentStatus): boolean => FROM[to].includes(from);

/**
 * The order status that goes with a payment's new status: paid moves a New order to Processing,
 * and so does refunded (a refund that came before its success stands for both); canceled
 * cancels a New one; anything else leaves the order where it is.
 */
export function orderStatusAfter(status: OrderStatus, payment: PaymentStatus): OrderStatus {
  if (status !== 'New') return status;
  if (payment === 'paid' || payment === 'refunded') return 'Processing';
  if (payment === 'canceled') return 'Cancelled';
  return status;
}

/** Statuses an order with a payment reaches only once it is paid (an unpaid order is not fulfilled). */
export const NEEDS_PAYMENT: readonly OrderStatus[] = ['Processing', 'Shipped', 'Delivered'];
