import { absoluteCheck, fmt, quantile, ratioCheck, renderResult, type BenchResult } from '../../bench/lib/report.ts';

// The statistics and verdicts `npm run bench` prints (bench/lib/report.ts): a wrong quantile or
// an inverted comparison would turn every benchmark's PASS/MISS into noise.

test('quantiles interpolate between the closest ranks, whatever the order of the samples', () => {
  expect(quantile([4, 1, 3, 2], 0.5)).toBe(2.5);
  expect(quantile([5], 0.99)).toBe(5);
  const hundred = Array.from({ length: 100 }, (_, i) => 100 - i); // 100 … 1
  expect(quantile(hundred, 0)).toBe(1);
  expect(quantile(hundred, 1)).toBe(100);
  expect(quantile(hundred, 0.99)).toBeCloseTo(99.01, 10);
  expect(quantile([], 0.5)).toBeNaN();
});

test('a ratio check passes at its limit and misses just past it, in both directions', () => {
  expect(ratioCheck('p50', 13, 10, 'ms', { max: 1.3 })).toMatchObject({
    ratio: 1.3,
    pass: true,
    target: '≤ 1.3 × baseline',
  });
  expect(ratioCheck('p50', 13.1, 10, 'ms', { max: 1.3 }).pass).toBe(false);
  expect(ratioCheck('pages/s', 70, 100, 'pages/s', { min: 0.7 })).toMatchObject({
    pass: true,
    target: '≥ 0.7 × baseline',
  });
  expect(ratioCheck('pages/s', 69, 100, 'pages/s', { min: 0.7 }).pass).toBe(false);
});

test('absolute checks compare with a maximum, a minimum or an exact value', () => {
  expect(absoluteCheck('rss', 512, 'MB', { max: 512 }).pass).toBe(true);
  expect(absoluteCheck('rss', 513, 'MB', { max: 512 }).pass).toBe(false);
  expect(absoluteCheck('rate', 9, 'x', { min: 10 }).pass).toBe(false);
  expect(absoluteCheck('requests', 2, 'requests', { eq: 1 }, { baseline: 1, ratio: 2 })).toMatchObject({
    pass: false,
    baseline: 1,
    target: '= 1 requests',
  });
});

test('numbers keep as many decimals as their size deserves', () => {
  expect(fmt(1234.5)).toBe('1,235');
  expect(fmt(10_029)).toBe('10,029');
  expect(fmt(3)).toBe('3');
  expect(fmt(43.62)).toBe('43.6');
  expect(fmt(2.126)).toBe('2.13');
  expect(fmt(0.2704)).toBe('0.270');
  expect(fmt(undefined)).toBe('–');
});

test('a result prints its verdicts, and a skipped one says what it waits for', () => {
  const base: BenchResult = {
    name: 'x',
    title: 'a bench',
    status: 'ok',
    checks: [],
    details: [],
    notes: [],
    durationMs: 1000,
  };
  const ok = renderResult({
    ...base,
    checks: [ratioCheck('p50 @1', 2.6, 2, 'ms', { max: 1.3 }), absoluteCheck('rss', 100, 'MB', { max: 512 })],
  });
  expect(ok).toMatch(/p50 @1\s+2\.60 ms\s+2 ms\s+1\.30 ×\s+≤ 1\.3 × baseline\s+PASS/);
  expect(ok).toMatch(/rss\s+100 MB\s+–\s+–\s+≤ 512 MB\s+PASS/);
  expect(renderResult({ ...base, checks: [ratioCheck('p50', 3, 2, 'ms', { max: 1.3 })] })).toContain('MISS');
  expect(renderResult({ ...base, status: 'skipped', reason: 'waiting for test/load/load.ts' })).toContain(
    'SKIPPED: waiting for test/load/load.ts',
  );
});
