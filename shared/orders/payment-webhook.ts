import type { ServiceEvents } from '../events/service-events.ts';
import { isoNow, type Clock } from '../clock.ts';
import type { PaymentEvent, PaymentProvider } from '../payments/payment-provider.ts';
import type { WebhookOutcome } from '../payments/schemas.ts';
import type { Credits } from '../limits/credits.ts';
import type { OrderRepository } from './order-repository.ts';
import type { Order } from './schemas.ts';
import { settleCancelled, tokensOf } from './order-service.ts';
import { orderStatusAfter, paymentMoves, paymentStatusAfter } from './payment-status.ts';

// The payment provider's events, verified and translated by the provider, move an order's payment
// and with it the order (docs/DECISIONS.md, Payments: webhooks).

interface WebhookDeps {
  orders: OrderRepository;
  clock: Clock;
  /** The provider, to refund a cancelled order found paid; undefined when the service takes no payments. */
  payments: PaymentProvider | undefined;
  /** The buyers' token credits, granted by paid orders and taken back by refunds. */
  credits: Pick<Credits, 'grant' | 'takeBack'>;
  /** The buyer's webhooks hear of a payment (order.paid); absent: nothing is told. */
  events?: ServiceEvents;
}

/** Attempts at a conditional write that another event for the same order may win first. */
const MAX_ATTEMPTS = 5;

/**
 * Receives one verified event (the provider checked its signature and translated it):
 * 1. a kind the service does not act upon (a partial refund, any other event), a payment that is
 *    not one of its orders': acknowledged, ignored;
 * 2. apply it (applyEvent);
 * 3. a paid order's credits are granted, a refunded one's taken back (settleCredits);
 * 4. a cancelled order found paid (its payment arrived after the cancellation) is refunded.
 */
export async function applyPaymentEvent(
  deps: WebhookDeps,
  event: PaymentEvent,
): Promise<{ eventId: string; outcome: WebhookOutcome }> {
  return { eventId: event.eventId, outcome: await applyEvent(deps, event) };
}

/**
 * Applies an event to its order, at most once:
 * 1. find the order by the payment; ignore when there is none or it has no payment;
 * 2. a payment already past what the event asks (a late, repeated or out-of-order event) is left
 *    as it is: a payment never moves backwards, and a full refund moves it whatever came before,
 *    so a success delivered after its refund changes nothing (shared/orders/payment-status.ts);
 * 3. write the payment's and the order's new statuses, on condition that this event was not applied
 *    before and the statuses are still those read; when the condition fails, either the event
 *    was applied (done) or another event came first (read again, go back to 2).
 */
async function applyEvent(deps: WebhookDeps, event: PaymentEvent): Promise<WebhookOutcome> {
  const { orders, clock } = deps;
  if (event.kind === 'other') return 'ignored';
  const target = paymentStatusAfter(event.kind);
  if (!target) return 'ignored';
  const { eventId, paymentId } = event;
  const orderId = await orders.orderIdOfPayment(paymentId);
  if (!orderId) return 'ignored';
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const order = await orders.get(orderId, true);
    if (!order?.payment || order.providerPaymentIntentId !== paymentId) return 'ignored';
    if (!paymentMoves(order.payment.status, target)) {
      // Also what completes an earlier delivery that moved the order and then failed.
      await settleCredits(deps, order);
      await refundIfCancelledAndPaid(deps, order);
      return (await orders.hasApplied(orderId, eventId)) ? 'already-applied' : 'ignored';
    }
    const result = await orders.applyPayment(orderId, {
      eventId,
      from: { status: order.status, payment: order.payment.status },
      to: { status: orderStatusAfter(order.status, target), payment: target },
      now: isoNow(clock),
    });
    if (result.outcome === 'changed') {
      if (target === 'paid')
        await deps.events?.emit(result.order.userId, 'order.paid', {
          orderId: result.order.id,
          status: result.order.status,
        });
      await settleCredits(deps, result.order);
      await refundIfCancelledAndPaid(deps, result.order);
      return 'applied';
    }
    if (await orders.hasApplied(orderId, eventId)) return 'already-applied';
  }
  // Other events kept winning: the provider delivers this one again later.
  throw new Error(`Payment event ${eventId} lost ${MAX_ATTEMPTS} races for order ${orderId}`);
}

/**
 * Grants the tokens a paid order's lines carry (grantsTokens × quantity) to its buyer, or takes
 * them back once the order is refunded. Each is once per order whatever the deliveries
 * (shared/limits/credits.ts), so it runs on every event found applied, a replay included: a
 * delivery that moved the order and failed before the credits is completed by the provider's
 * next attempt (docs/DECISIONS.md "Credits").
 */
async function settleCredits(deps: WebhookDeps, order: Order): Promise<void> {
  const tokens = tokensOf(order);
  if (!tokens) return;
  if (order.payment?.status === 'paid') await deps.credits.grant(order.userId, order.id, tokens);
  else if (order.payment?.status === 'refunded') await deps.credits.takeBack(order.userId, order.id, tokens);
}

async function refundIfCancelledAndPaid(deps: WebhookDeps, order: Parameters<typeof settleCancelled>[1]) {
  if (order.status === 'Cancelled' && order.payment?.status === 'paid') {
    await settleCancelled({ payments: deps.payments }, order);
  }
}
