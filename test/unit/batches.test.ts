import { GreedyPacker, packBatches } from '#shared/batches.ts';

// The one greedy packer: items in order, a batch closed when the next item would take it over
// its count or its weight; an item heavier than the limit alone still gets a batch of its own.

const weight = (n: number) => n;

test('closes a batch at the item count', () => {
  expect(packBatches([1, 1, 1, 1, 1], { maxItems: 2, maxWeight: 100 }, weight)).toEqual([[1, 1], [1, 1], [1]]);
});

test('closes a batch before the weight would pass the limit, never splitting an item', () => {
  expect(packBatches([4, 5, 2, 9, 1], { maxItems: 10, maxWeight: 10 }, weight)).toEqual([[4, 5], [2], [9, 1]]);
  expect(packBatches([3, 7, 3], { maxItems: 10, maxWeight: 10 }, weight)).toEqual([[3, 7], [3]]); // exactly full is full
});

test('an item over the weight limit goes alone', () => {
  expect(packBatches([2, 50, 2], { maxItems: 10, maxWeight: 10 }, weight)).toEqual([[2], [50], [2]]);
});

test('no items, no batches', () => {
  expect(packBatches([], { maxItems: 1, maxWeight: 1 }, weight)).toEqual([]);
});

test('incrementally: add hands back the batch the new item closed, flush the rest, once', () => {
  const packer = new GreedyPacker<number>({ maxItems: 2, maxWeight: 100 }, weight);
  expect([packer.add(1), packer.add(2), packer.add(3)]).toEqual([undefined, undefined, [1, 2]]);
  expect(packer.flush()).toEqual([3]);
  expect(packer.flush()).toBeUndefined();
});
