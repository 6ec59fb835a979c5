import { assertCanMove, canMove, nextStatuses } from '#shared/orders/order-status.ts';
import { ALLOWED_MOVES, EVERY_MOVE } from '#test/helpers/order-moves.ts';
import { ConflictError } from '#shared/errors.ts';
import { httpErrorOf } from '#shared/http/errors.ts';

// The whole 5×5 table, written out by hand (test/helpers/order-moves.ts).
const table = EVERY_MOVE;

test('the table has 25 moves, 5 allowed', () => {
  expect(table).toHaveLength(25);
  expect(table.filter(([f, t]) => canMove(f, t))).toHaveLength(5);
});

test.each(table)('%s → %s', (from, to) => {
  const allowed = ALLOWED_MOVES.has(`${from}>${to}`);
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
