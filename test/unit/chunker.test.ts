import fc from 'fast-check';
import { Chunker, chunkPages, chunkerId } from '#shared/ingestion/chunker.ts';
import { splitSentences, normalizeText } from '#shared/sentences.ts';
import { countTextTokens } from '#shared/ingestion/chunk-tokens.ts';
import { balancedLimits, PartPlanner, type PartLimits } from '#shared/ingestion/embed-parts.ts';
import { knownSentence } from '#test/helpers/make-pdf.ts';

// The token-aware chunker: sizes, overlap on sentence boundaries, pages, coverage.

const options = (chunkTokens = 800, overlapTokens = 100) => ({
  chunkTokens,
  overlapTokens,
  countTokens: countTextTokens,
});
const pageOf = (page: number, n = 40) => Array.from({ length: n }, (_, i) => knownSentence(page, i)).join(' ');

test('chunks stay within the token budget, counted exactly', () => {
  const pages = Array.from({ length: 30 }, (_, i) => ({ page: i + 1, text: pageOf(i + 1) }));
  const chunks = chunkPages(pages, options());
  expect(chunks.length).toBeGreaterThan(5);
  for (const c of chunks) {
    const exact = countTextTokens(c.text);
    expect(exact).toBeLessThanOrEqual(800);
    expect(c.tokens).toBe(exact);
  }
  // Packed full, not one sentence each (the last one holds what is left).
  for (const c of chunks.slice(0, -1)) expect(c.tokens).toBeGreaterThan(750);
  expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));
});

test('each chunk starts with the last whole sentences of the previous one (about 100 tokens)', () => {
  const pages = Array.from({ length: 10 }, (_, i) => ({ page: i + 1, text: pageOf(i + 1) }));
  const chunks = chunkPages(pages, options());
  for (let i = 1; i < chunks.length; i++) {
    const prev = splitSentences(chunks[i - 1]!.text);
    const next = splitSentences(chunks[i]!.text);
    // The overlap is a run of whole sentences ending the previous chunk.
    let shared = 0;
    while (shared < next.length && prev.includes(next[shared]!)) shared++;
    expect(shared).toBeGreaterThan(0);
    expect(prev.slice(-shared)).toEqual(next.slice(0, shared));
    const overlapTokens = next.slice(0, shared).reduce((n, s) => n + countTextTokens(` ${s}`), 0);
    expect(overlapTokens).toBeLessThanOrEqual(100);
    expect(overlapTokens).toBeGreaterThan(50);
  }
});

test('pages are kept: a chunk knows its first and last page and where each page starts', () => {
  const pages = [1, 2, 3].map((page) => ({ page, text: pageOf(page, 25) }));
  const chunks = chunkPages(pages, options(400, 50));
  const spanning = chunks.find((c) => c.pageEnd > c.page)!;
  expect(spanning).toBeDefined();
  for (const [offset, page] of spanning.pageStarts) {
    expect(spanning.text.slice(offset)).toMatch(new RegExp(`^[^.]*\\(folio ${page}\\.\\d+\\)\\.`));
  }
  expect(spanning.pageStarts[0]).toEqual([0, spanning.page]);
  expect(spanning.pageStarts.at(-1)![1]).toBe(spanning.pageEnd);
});

test('every sentence of the document is in some chunk, in order', () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.array(fc.stringMatching(/^[A-Za-z][a-z]{0,12}( [a-z]{1,12}){0,30}[.!?]$/), { minLength: 0, maxLength: 12 }),
        {
          minLength: 1,
          maxLength: 6,
        },
      ),
      fc.integer({ min: 50, max: 200 }),
      (pages, chunkTokens) => {
        const input = pages.map((sentences, i) => ({ page: i + 1, text: normalizeText(sentences.join(' ')) }));
        const chunks = chunkPages(input, options(chunkTokens, Math.floor(chunkTokens / 4)));
        const all = chunks.map((c) => c.text).join(' ');
        for (const p of input) for (const s of splitSentences(p.text)) expect(all).toContain(s);
        for (const c of chunks) expect(countTextTokens(c.text)).toBeLessThanOrEqual(chunkTokens + 1);
      },
    ),
    { numRuns: 60 },
  );
});

test('a sentence longer than a chunk is cut between words; a huge word between characters', () => {
  const long = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
  const blob = 'x'.repeat(5000);
  const chunks = chunkPages([{ page: 1, text: `${long}. ${blob}.` }], options(100, 20));
  expect(chunks.length).toBeGreaterThan(5);
  for (const c of chunks) expect(countTextTokens(c.text)).toBeLessThanOrEqual(100);
  expect(chunks.map((c) => c.text).join(' ')).toContain('word399');
});

test('pages pushed one at a time give the same chunks as all at once', () => {
  const pages = Array.from({ length: 8 }, (_, i) => ({ page: i + 1, text: pageOf(i + 1, 15) }));
  const chunker = new Chunker(options(300, 40));
  const streamed = [...pages.flatMap((p) => chunker.push(p.page, p.text)), ...chunker.finish()];
  expect(streamed).toEqual(chunkPages(pages, options(300, 40)));
});

test('empty pages produce no chunks, and text that spells a special token is just text', () => {
  expect(chunkPages([{ page: 1, text: '' }], options())).toEqual([]);
  const [chunk] = chunkPages([{ page: 1, text: 'The model saw <|endoftext|> in a PDF.' }], options());
  expect(chunk!.text).toBe('The model saw <|endoftext|> in a PDF.');
});

test('the chunker id names its version, encoding and sizes', () => {
  expect(chunkerId(800, 100)).toBe('v3:cl100k_base:800:100');
});

test('parts fill up to the request limits: inputs and tokens', () => {
  const chunks = chunkPages(
    Array.from({ length: 20 }, (_, i) => ({ page: i + 1, text: pageOf(i + 1) })),
    options(200, 20),
  );
  const byInputs: number[] = [];
  const planner = new PartPlanner(
    { maxInputs: 16, maxTokens: 1_000_000 },
    (c) => c.tokens,
    (_, list) => byInputs.push(list.length),
  );
  chunks.forEach((c) => planner.add(c));
  planner.flush();
  expect(byInputs.slice(0, -1).every((n) => n === 16)).toBe(true);
  expect(byInputs.reduce((a, b) => a + b, 0)).toBe(chunks.length);
  expect(planner.parts).toBe(Math.ceil(chunks.length / 16));

  const byTokens: number[] = [];
  const tokens = new PartPlanner(
    { maxInputs: 2048, maxTokens: 1000 },
    (c) => c.tokens,
    (_, list) => byTokens.push(list.reduce((n, c) => n + c.tokens, 0)),
  );
  chunks.forEach((c) => tokens.add(c));
  tokens.flush();
  expect(byTokens.every((t) => t <= 1000)).toBe(true);
});

/** The parts the planner makes of chunks of these weights: each part's inputs and weight. */
const planned = (limits: PartLimits, weights: number[]) => {
  const parts: { inputs: number; weight: number }[] = [];
  const planner = new PartPlanner(
    limits,
    (c) => c.tokens,
    (_, list) => parts.push({ inputs: list.length, weight: list.reduce((n, c) => n + c.tokens, 0) }),
  );
  for (const [index, tokens] of weights.entries())
    planner.add({ index, text: '', page: 1, pageEnd: 1, pageStarts: [[1, 0]], tokens });
  planner.flush();
  return parts;
};

test('balanced part limits even out the binding limit: the same parts, none larger than needed', () => {
  const limits = { maxInputs: 2048, maxTokens: 600 };
  // 1,000 tokens in chunks of 10: 600 and 400 by the plain limit; by the run's share (500, plus
  // one chunk of slack so no part need close early) 510 and 490.
  const weights = Array.from({ length: 100 }, () => 10);
  expect(planned(limits, weights).map((p) => p.weight)).toEqual([600, 400]);
  expect(planned(balancedLimits(limits, weights), weights).map((p) => p.weight)).toEqual([510, 490]);
  // By inputs: 9 chunks, 6 a request → 5 and 4, not 6 and 3.
  const byInputs = { maxInputs: 6, maxTokens: 1_000_000 };
  const nine = Array.from({ length: 9 }, () => 1);
  expect(planned(balancedLimits(byInputs, nine), nine).map((p) => p.inputs)).toEqual([5, 4]);
});

test('balanced part limits: never more parts than the plain limits, each within them, the largest no larger', () => {
  fc.assert(
    fc.property(
      fc.record({ maxInputs: fc.integer({ min: 1, max: 40 }), maxTokens: fc.integer({ min: 50, max: 2_000 }) }),
      // Long runs too: where both limits close parts, greedy packing with evened limits can need one more.
      fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 400, size: 'max' }),
      (limits, weights) => {
        const plain = planned(limits, weights);
        const balanced = planned(balancedLimits(limits, weights), weights);
        expect(balanced.length).toBeLessThanOrEqual(plain.length);
        for (const p of balanced) {
          expect(p.inputs).toBeLessThanOrEqual(limits.maxInputs);
          expect(p.weight).toBeLessThanOrEqual(limits.maxTokens);
        }
        const largest = (parts: typeof plain, key: 'inputs' | 'weight') => Math.max(...parts.map((p) => p[key]));
        expect(largest(balanced, 'weight')).toBeLessThanOrEqual(largest(plain, 'weight'));
        expect(largest(balanced, 'inputs')).toBeLessThanOrEqual(largest(plain, 'inputs'));
      },
    ),
    { numRuns: 1_000 },
  );
});
