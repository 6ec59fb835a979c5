import { ORDER_STATUSES, assertCanMove, canMove, nextStatuses, type OrderStatus } from '#shared/orders/order-status.ts';
import { ConflictError } from '#shared/errors.ts';
import { httpErrorOf } from '#shared/http/errors.ts';

// The whole 5×5 table, written out by hand so a change to the machine has to change it here too.
const ALLOWED = new Set([
  'New>Processing',
  'New>Cancelled',
  'Processing>Shipped',
  'Processing>Cancelled',
  'Shipped>Delivered',
]);

const table = ORDER_STATUSES.flatMap((from) => ORDER_STATUSES.map((to) => [from, to] as [OrderStatus, OrderStatus]));

test('the table has 25 moves, 5 allowed', () => {
  expect(table).toHaveLength(25);
  expect(table.filter(([f, t]) => canMove(f, t))).toHaveLength(5);
});

test.each(table)('%s → %s', (from, to) => {
  const allowed = ALLOWED.has(`${from}>${to}`);
  expect(canMove(from, to)).toBe(allowed);
  expect(nextStatuses(from).includes(to)).toBe(allowed);
  if (allowed) {
    expect(() => assertCanMove(from, to)).not.toThrow();
  } else {
    let error: unknown;
    try {
      assertCanMove(from, to);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConflictError);
    expect(httpErrorOf(error)?.statusCode).toBe(409);
    // The message always names the current status.
    expect((error as ConflictError).message).toContain(from);
    expect((error as ConflictError).message).toMatch(
      from === to ? `Order is already ${from}` : `Cannot move order from ${from} to ${to}`,
    );
  }
});

test('Delivered and Cancelled are final', () => {
  expect(nextStatuses('Delivered')).toEqual([]);
  expect(nextStatuses('Cancelled')).toEqual([]);
  expect(() => assertCanMove('Delivered', 'Cancelled')).toThrow('Delivered is final');
});
