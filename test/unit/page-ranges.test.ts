import { planRanges } from '#shared/pdf/page-ranges.ts';

// How a long document is split: as few ranges as the limit allows, of equal length in whole
// blocks of 32 pages, covering every page once.

const covers = (pages: number, ranges: { first: number; last: number }[]) => {
  expect(ranges[0]!.first).toBe(1);
  expect(ranges.at(-1)!.last).toBe(pages);
  for (let i = 1; i < ranges.length; i++) expect(ranges[i]!.first).toBe(ranges[i - 1]!.last + 1);
};

test('a document within one range is read whole', () => {
  expect(planRanges(1, 256)).toEqual([{ first: 1, last: 1 }]);
  expect(planRanges(256, 256)).toEqual([{ first: 1, last: 256 }]);
});

test('a longer one in as few ranges as the limit allows, of equal length in blocks of 32 pages', () => {
  expect(planRanges(300, 256)).toEqual([
    { first: 1, last: 160 },
    { first: 161, last: 300 },
  ]);
  expect(planRanges(257, 256)).toEqual([
    { first: 1, last: 160 },
    { first: 161, last: 257 },
  ]);
  const long = planRanges(2000, 256);
  expect(long).toHaveLength(8);
  expect(long.slice(0, -1).every((r) => r.last - r.first + 1 === 256)).toBe(true);
  covers(2000, long);
});

test('every page in exactly one range, never more ranges than needed, each at most the limit', () => {
  for (const limit of [32, 64, 256, 1024])
    for (let pages = 1; pages <= 3000; pages += 37) {
      const ranges = planRanges(pages, limit);
      covers(pages, ranges);
      expect(ranges).toHaveLength(Math.ceil(pages / limit));
      for (const r of ranges.slice(0, -1)) expect((r.last - r.first + 1) % 32).toBe(0);
      for (const r of ranges) expect(r.last - r.first + 1).toBeLessThanOrEqual(limit);
    }
});
