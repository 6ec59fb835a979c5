import { ORDER_STATUSES, type OrderStatus } from '#shared/orders/order-status.ts';

// The order status machine's whole 5×5 table, written out by hand so a change to the machine has
// to change it here too (the unit and the HTTP tests both check every move against it).

/** The moves allowed, as `from>to`. */
export const ALLOWED_MOVES = new Set([
  'New>Processing',
  'New>Cancelled',
  'Processing>Shipped',
  'Processing>Cancelled',
  'Shipped>Delivered',
]);

/** Every pair of statuses, allowed or not. */
export const EVERY_MOVE = ORDER_STATUSES.flatMap((from) =>
  ORDER_STATUSES.map((to) => [from, to] as [OrderStatus, OrderStatus]),
);
