import { createId } from '@paralleldrive/cuid2';
import type { AuthUser } from '../users/authenticate.ts';
import { isoNow, type Clock } from '../clock.ts';
import { InvalidInputError, ConflictError, NotFoundError, type FieldIssue } from '../errors.ts';
import type { ProductRepository } from '../products/product-repository.ts';
import { INITIAL_ORDER_STATUS, assertCanMove, type OrderStatus } from './order-status.ts';
import type { OrderRepository, Page } from './order-repository.ts';
import type { CreateOrderInput, Order, OrderItem } from './schemas.ts';

// Order use cases. Who may call what is decided here for reads (owner or admin) and by the
// route manifest for writes (PUT /orders/{id} is admin-only).

const notFound = () => new NotFoundError('Order not found');

interface OrderDeps {
  orders: OrderRepository;
  products: ProductRepository;
  clock: Clock;
}

/**
 * Places an order for the caller:
 * 1. load every named product in one batch; any unknown one is refused by name;
 * 2. refuse items in more than one currency;
 * 3. copy name and price into each item and compute the total from them (prices at order time);
 * 4. store the order with status New.
 */
export async function createOrder(
  { orders, products, clock }: OrderDeps,
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
    return { productId, name: p.name, quantity, unitPriceCents: p.priceCents, currency: p.currency };
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

  const now = isoNow(clock);
  const order: Order = {
    id: createId(),
    userId: user.id,
    status: INITIAL_ORDER_STATUS,
    createdAt: now,
    updatedAt: now,
    providerPaymentIntentId: input.providerPaymentIntentId,
    items,
    totalCents: items.reduce((sum, i) => sum + i.quantity * i.unitPriceCents, 0),
    currency: currencies[0] ?? null,
  };
  await orders.create(order);
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
  return order;
}

/**
 * Lists orders, newest first:
 * 1. an admin reads the all-orders index, anyone else their own orders;
 * 2. one page from the cursor; the next cursor comes back with it.
 */
export function listOrders(
  { orders }: Pick<OrderDeps, 'orders'>,
  { user, limit, cursor }: { user: AuthUser; limit: number; cursor?: string },
): Promise<Page<Order>> {
  return user.role === 'admin' ? orders.listAll(limit, cursor) : orders.listForUser(user.id, limit, cursor);
}

/**
 * Moves an order to another status (admin):
 * 1. load it; not found when there is none;
 * 2. check the move against the status machine; InvalidTransitionError naming the current status when forbidden;
 * 3. write the new status on condition that the status is still the one read in 1, so of two
 *    racing updates one wins and the other gets a ConflictError naming the status it lost to.
 */
export async function changeOrderStatus(
  { orders, clock }: Pick<OrderDeps, 'orders' | 'clock'>,
  { id, status: to }: { id: string; status: OrderStatus },
): Promise<Order> {
  const order = await orders.get(id, true);
  if (!order) throw notFound();
  assertCanMove(order.status, to);
  const result = await orders.changeStatus(id, order.status, to, isoNow(clock));
  if (result.outcome === 'changed') return result.order;
  const now = await orders.get(id, true);
  if (!now) throw notFound();
  throw new ConflictError(
    `Order status changed from ${order.status} to ${now.status} while this update ran; ${to} was not applied (current status: ${now.status})`,
    'CONCURRENT_UPDATE',
  );
}
