import { InvalidTransitionError } from '../errors.ts';

// The order status machine: New → Processing → Shipped → Delivered, and
// New | Processing → Cancelled. Delivered and Cancelled are final. Setting the status an order
// already has is refused like any other move the machine does not list (InvalidTransitionError), so a retried or
// duplicated update can never pass unnoticed as a second change.

export const ORDER_STATUSES = ['New', 'Processing', 'Shipped', 'Delivered', 'Cancelled'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const INITIAL_ORDER_STATUS: OrderStatus = 'New';

const NEXT: Record<OrderStatus, readonly OrderStatus[]> = {
  New: ['Processing', 'Cancelled'],
  Processing: ['Shipped', 'Cancelled'],
  Shipped: ['Delivered'],
  Delivered: [],
  Cancelled: [],
};

/** The statuses an order in `from` may move to. */
export function nextStatuses(from: OrderStatus): readonly OrderStatus[] {
  return NEXT[from];
}

export function canMove(from: OrderStatus, to: OrderStatus): boolean {
  return NEXT[from].includes(to);
}

/** Throws an InvalidTransitionError naming the current status when the machine forbids the move. */
export function assertCanMove(from: OrderStatus, to: OrderStatus): void {
  if (canMove(from, to)) return;
  const allowed = NEXT[from];
  const hint = allowed.length ? ` (allowed: ${allowed.join(', ')})` : ` (${from} is final)`;
  const what = from === to ? `Order is already ${from}` : `Cannot move order from ${from} to ${to}`;
  throw new InvalidTransitionError(`${what}${hint}`);
}
