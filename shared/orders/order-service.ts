import { createId } from '../ids.ts';
import type { AuthUser } from '../users/authenticate.ts';
import { isoNow, type Clock } from '../clock.ts';
import {
  InvalidInputError,
  ConflictError,
  NotFoundError,
  DependencyUnavailableError,
  asError,
  type FieldIssue,
} from '../errors.ts';
import { logger } from '../observability/logger.ts';
import type { ProductRepository } from '../products/product-repository.ts';
import { AmountRefusedError, type PaymentProvider } from '../payments/payment-provider.ts';
import { INITIAL_ORDER_STATUS, assertCanMove, type OrderStatus } from './order-status.ts';
import { NEEDS_PAYMENT, orderStatusAfter, type PaymentStatus } from './payment-status.ts';
import type { Credits } from '../limits/credits.ts';
import type { OrderRepository, Page } from './order-repository.ts';
import type { CreateOrderInput, Order, OrderItem, Payment } from './schemas.ts';

// Order use cases. Who may call what is decided here for reads (owner or admin) and by the
// route manifest for writes (PUT /orders/{id} is admin-only).

const notFound = () => new NotFoundError('Order not found');

interface OrderDeps {
  orders: OrderRepository;
  products: ProductRepository;
  clock: Clock;
  /** The payment provider; undefined when the service takes no payments (orders carry `payment: null`). */
  payments?: PaymentProvider | undefined;
  /** The buyers' token credits, granted by an order paid when it is placed (a free one). */
  credits?: Pick<Credits, 'grant'>;
}

/** The tokens an order grants its buyer once paid: grantsTokens × quantity over its lines. */
export const tokensOf = (order: Order): number =>
  order.items.reduce((sum, line) => sum + (line.grantsTokens ?? 0) * line.quantity, 0);

/**
 * Idempotency keys at the provider, derived from the order: however often a request is retried
 * (by us, by the client, after a crash), an order has one payment and at most one refund. The
 * words are those first sent, kept so that a retry across a deployment finds its first request.
 */
export const providerKeys = (orderId: string) => ({
  create: `order-${orderId}-intent`,
  refund: `order-${orderId}-refund`,
  cancel: `order-${orderId}-cancel`,
});

/** The order as `user` may see it: the payment's client secret is its owner's alone. */
export function orderFor(user: AuthUser, order: Order): Order {
  if (!order.payment?.clientSecret || order.userId === user.id) return order;
  const { clientSecret: _secret, ...payment } = order.payment;
  return { ...order, payment };
}

/**
 * Places an order for the caller:
 * 1. load every named product in one batch; any unknown one is refused by name;
 * 2. refuse items in more than one currency;
 * 3. copy name and price into each item and compute the total from them (prices at order time);
 * 4. with payments: create the payment at the provider for the total, under an idempotency key
 *    derived from the order's id (chosen first); a provider failure ends here, with nothing
 *    written. A total of 0 needs no payment at the provider: the order is paid as it is placed (Processing);
 * 5. link the payment to the order and store the order with status New; if either write fails, the
 *    payment is cancelled (docs/DECISIONS.md, Payments: an order and its intent);
 * 6. a free order's credits are granted at once (docs/DECISIONS.md, Payments: free orders).
 */
export async function createOrder(
  { orders, products, clock, payments, credits }: OrderDeps,
  { user, order: input }: { user: AuthUser; order: CreateOrderInput },
): Promise<Order> {
  const found = input.items.length ? await products.getMany(input.items.map((i) => i.productId)) : new Map();

  const unknown = input.items.flatMap((item, i) => (found.has(item.productId) ? [] : [{ i, id: item.productId }]));
  if (unknown.length) {
    const issues: FieldIssue[] = unknown.map(({ i, id }) => ({
      path: `body.items.${i}.productId`,
      message: `No product with id ${id}`,
      code: 'unknown_product',
    }));
    throw new InvalidInputError(
      `Unknown product${unknown.length > 1 ? 's' : ''}: ${unknown.map((u) => u.id).join(', ')}`,
      issues,
      'UNKNOWN_PRODUCT',
    );
  }

  const items: OrderItem[] = input.items.map(({ productId, quantity }) => {
    const p = found.get(productId)!;
    const line: OrderItem = { productId, name: p.name, quantity, unitPriceCents: p.priceCents, currency: p.currency };
    // What the line grants is fixed when the order is placed, like its price.
    if (p.grantsTokens) line.grantsTokens = p.grantsTokens;
    return line;
  });
  const currencies = [...new Set(items.map((i) => i.currency))];
  if (currencies.length > 1) {
    throw new InvalidInputError(
      `All items of an order must share one currency; these are in ${currencies.join(', ')}`,
      items.map((item, i) => ({
        path: `body.items.${i}.productId`,
        message: `Priced in ${item.currency}`,
        code: 'mixed_currency',
      })),
      'MIXED_CURRENCY',
    );
  }

  const id = createId();
  const totalCents = items.reduce((sum, i) => sum + i.quantity * i.unitPriceCents, 0);
  const currency = currencies[0] ?? null;
  let payment: Payment | null = null;
  let paymentId: string | null = null;
  let status: OrderStatus = INITIAL_ORDER_STATUS;
  if (payments && currency && totalCents === 0) {
    // Nothing is due, and a provider refuses a payment of 0: paid in full as it is placed.
    payment = { status: 'paid', amountCents: 0, currency };
    status = orderStatusAfter(status, 'paid');
  } else if (payments && currency) {
    const made = await payments
      .createPayment({ amountCents: totalCents, currency, orderId: id, idempotencyKey: providerKeys(id).create })
      .catch((err: unknown) => {
        throw err instanceof AmountRefusedError ? amountRefused(err) : err;
      });
    paymentId = made.paymentId;
    payment = { status: 'requires_payment', amountCents: totalCents, currency, clientSecret: made.clientSecret };
  }
  const now = isoNow(clock);
  const order: Order = {
    id,
    userId: user.id,
    status,
    createdAt: now,
    updatedAt: now,
    providerPaymentIntentId: paymentId,
    payment,
    items,
    totalCents,
    currency,
  };
  try {
    if (paymentId) await orders.linkPayment(paymentId, id);
    await orders.create(order);
  } catch (err) {
    // The order could not be stored: its payment is cancelled, so none is left without an order.
    if (payments && paymentId)
      await payments.cancelPayment(paymentId, providerKeys(id).cancel).catch((cancelErr: unknown) => {
        logger.error('a payment without an order could not be cancelled', { paymentId, error: asError(cancelErr) });
      });
    throw err;
  }
  const tokens = tokensOf(order);
  if (payment?.status === 'paid' && tokens) await credits?.grant(order.userId, order.id, tokens);
  return order;
}

/**
 * Reads one order:
 * 1. load it by id;
 * 2. not found when there is none or when the caller is neither its owner nor an admin (a stranger
 *    cannot tell someone else's order from a missing one).
 */
export async function getOrder(
  { orders }: Pick<OrderDeps, 'orders'>,
  { user, id }: { user: AuthUser; id: string },
): Promise<Order> {
  const order = await orders.get(id);
  if (!order || (order.userId !== user.id && user.role !== 'admin')) throw notFound();
  return orderFor(user, order);
}

/**
 * Lists orders, newest first:
 * 1. an admin reads the all-orders index, anyone else their own orders; either only those whose
 *    payment has `paymentStatus` when it is given;
 * 2. one page from the cursor; the next cursor comes back with it.
 */
export async function listOrders(
  { orders }: Pick<OrderDeps, 'orders'>,
  {
    user,
    limit,
    cursor,
    paymentStatus,
  }: { user: AuthUser; limit: number; cursor?: string; paymentStatus?: PaymentStatus },
): Promise<Page<Order>> {
  const page =
    user.role === 'admin'
      ? await orders.listAll(limit, cursor, paymentStatus)
      : await orders.listForUser(user.id, limit, cursor, paymentStatus);
  return { ...page, items: page.items.map((order) => orderFor(user, order)) };
}

/**
 * Moves an order to another status (admin):
 * 1. load it; not found when there is none;
 * 2. a Cancelled order whose payment is still `paid` may be cancelled again: that retries its
 *    refund (step 5), which an earlier attempt could not request;
 * 3. check the move against the status machine; InvalidTransitionError naming the current status
 *    when forbidden; an order with a payment reaches Processing and Shipped only once it is paid;
 * 4. write the new status on condition that the status (and payment status) is still the one read
 *    in 1, so of two racing updates one wins and the other gets a ConflictError naming the status it lost to;
 * 5. a cancelled order's payment is settled at the provider after the write (the write records
 *    what is owed, so a failure here is retried, never forgotten): a paid one refunded, an unpaid
 *    payment cancelled so that it can no longer be paid; each under a key derived from the order,
 *    so retries never refund twice (docs/DECISIONS.md, Payments: refunds).
 */
export async function changeOrderStatus(
  { orders, clock, payments }: Pick<OrderDeps, 'orders' | 'clock' | 'payments'>,
  { id, status: to, user }: { id: string; status: OrderStatus; user: AuthUser },
): Promise<Order> {
  // The admin sees the order as any admin does: without its owner's client secret.
  const shown = (order: Order) => orderFor(user, order);
  const order = await orders.get(id, true);
  if (!order) throw notFound();
  if (order.status === 'Cancelled' && to === 'Cancelled' && order.payment?.status === 'paid') {
    await settleCancelled({ payments }, order);
    return shown(order);
  }
  assertCanMove(order.status, to);
  if (order.payment && order.payment.status !== 'paid' && NEEDS_PAYMENT.includes(to)) {
    throw new ConflictError(
      `Cannot move order to ${to}: its payment is ${order.payment.status}, not paid`,
      'PAYMENT_REQUIRED',
    );
  }
  const result = await orders.changeStatus(id, order.status, to, isoNow(clock), order.payment?.status);
  if (result.outcome === 'changed') {
    if (to === 'Cancelled') await settleCancelled({ payments }, result.order);
    return shown(result.order);
  }
  const now = await orders.get(id, true);
  if (!now) throw notFound();
  if (now.status === order.status) {
    throw new ConflictError(
      `Order payment changed from ${order.payment?.status} to ${now.payment?.status} while this update ran; ${to} was not applied`,
      'CONCURRENT_UPDATE',
    );
  }
  throw new ConflictError(
    `Order status changed from ${order.status} to ${now.status} while this update ran; ${to} was not applied (current status: ${now.status})`,
    'CONCURRENT_UPDATE',
  );
}

/**
 * Settles a cancelled order's payment at the provider: refunds a paid one (DependencyUnavailableError
 * when the provider cannot be reached: cancelling again retries), cancels an unpaid one (best
 * effort: should it be paid after all, the succeeded event refunds it).
 */
export async function settleCancelled({ payments }: Pick<OrderDeps, 'payments'>, order: Order): Promise<void> {
  const paymentId = order.providerPaymentIntentId;
  if (!payments || !paymentId || !order.payment) return;
  const keys = providerKeys(order.id);
  if (order.payment.status === 'paid') {
    await payments.refundPayment(paymentId, keys.refund).catch((err: unknown) => {
      logger.error('refund failed', { orderId: order.id, error: asError(err) });
      throw new DependencyUnavailableError(
        'The order is cancelled, but its refund could not be requested yet; set Cancelled again to retry it',
        5,
      );
    });
  } else if (order.payment.status === 'requires_payment' || order.payment.status === 'failed') {
    await payments.cancelPayment(paymentId, keys.cancel).catch((err: unknown) => {
      logger.warn('cancelling the payment failed', { orderId: order.id, error: asError(err) });
    });
  }
}

/** An amount the provider cannot take is the order's: the client's 400, naming the items. */
function amountRefused(err: AmountRefusedError): InvalidInputError {
  const code = `amount_${err.limit}`;
  return new InvalidInputError(
    `The payment provider cannot take this amount: ${err.message}`,
    [{ path: 'body.items', message: err.message, code }],
    code.toUpperCase(),
  );
}
