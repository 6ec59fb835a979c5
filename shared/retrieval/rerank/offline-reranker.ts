import { termSequence } from '../terms.ts';
import type { Reranker, RerankInput, RerankResult } from './reranker.ts';

// The offline reranker: no model, only what the lexical index knows, read closer than BM25 reads
// it. BM25 scores each term on its own; a passage that answers a question usually holds the
// question's rare words together, in its order, under a heading that names the topic. Each
// candidate gets (weights in WEIGHTS, fractions of the query's total rarity):
//   coverage   the rarity of the query terms it contains (a rare name counts more than a common word)
//   proximity  the rarity of the distinct query terms inside its densest window of WINDOW terms
//   phrase     the rarity of the query's consecutive term pairs that it holds side by side
//   heading    the rarity of the query terms its innermost heading holds
//   prior      its place in the retrieval order (dense and BM25 fused), so that the semantic
//              evidence the fusion found is kept when the lexical one is equal
// Rarity is the inverse document frequency of each term over the searched files (their lexical
// indexes); without it, over the candidates themselves. Terms are those of the index (terms.ts:
// stop words dropped, light stemming), so the reranker sees the words BM25 saw.

const WINDOW = 12;
const WEIGHTS = { coverage: 1, proximity: 0.6, phrase: 0.4, heading: 0.3, prior: 0.35 };
const TOTAL = Object.values(WEIGHTS).reduce((a, b) => a + b, 0);

/** Rarity of each term over the passages themselves (when the index's weights are not given). */
function localRarity(query: number[], passages: Set<number>[]): Map<number, number> {
  const n = passages.length;
  return new Map(
    query.map((t) => {
      const df = passages.reduce((c, p) => c + (p.has(t) ? 1 : 0), 0);
      return [t, Math.log(1 + (n - df + 0.5) / (df + 0.5))];
    }),
  );
}

/** The largest rarity of distinct query terms within any WINDOW consecutive terms of the sequence. */
function densestWindow(sequence: number[], weight: Map<number, number>): number {
  const inWindow = new Map<number, number>();
  let sum = 0;
  let best = 0;
  for (let i = 0; i < sequence.length; i++) {
    const t = sequence[i]!;
    const w = weight.get(t);
    if (w !== undefined) {
      const c = inWindow.get(t) ?? 0;
      if (c === 0) sum += w;
      inWindow.set(t, c + 1);
    }
    const out = i - WINDOW;
    if (out >= 0) {
      const o = sequence[out]!;
      const ow = weight.get(o);
      if (ow !== undefined) {
        const c = inWindow.get(o)! - 1;
        inWindow.set(o, c);
        if (c === 0) sum -= ow;
      }
    }
    if (sum > best) best = sum;
  }
  return best;
}

/** Scores the candidates; exported for the tests' sake (the figures behind an order). */
export function offlineScores(input: Pick<RerankInput, 'query' | 'passages' | 'termWeights'>): number[] {
  const querySequence = termSequence(input.query);
  const query = [...new Set(querySequence)];
  const sequences = input.passages.map((p) => termSequence(p.text));
  const sets = sequences.map((s) => new Set(s));
  const given = input.termWeights?.();
  const weight = given && query.every((t) => given.has(t)) ? given : localRarity(query, sets);
  const queryWeights = new Map(query.map((t) => [t, weight.get(t) ?? 0]));
  const total = query.reduce((n, t) => n + queryWeights.get(t)!, 0);
  const pairs: [number, number][] = [];
  for (let i = 0; i + 1 < querySequence.length; i++)
    if (querySequence[i] !== querySequence[i + 1]) pairs.push([querySequence[i]!, querySequence[i + 1]!]);
  const pairTotal = pairs.reduce((n, [a, b]) => n + queryWeights.get(a)! + queryWeights.get(b)!, 0);
  const n = input.passages.length;

  return input.passages.map((p, i) => {
    const prior = 1 - i / n;
    if (total <= 0) return (WEIGHTS.prior * prior) / TOTAL;
    const sequence = sequences[i]!;
    const has = sets[i]!;
    const coverage = query.reduce((s, t) => s + (has.has(t) ? queryWeights.get(t)! : 0), 0) / total;
    const proximity = densestWindow(sequence, queryWeights) / total;
    let phrase = 0;
    if (pairTotal > 0) {
      const adjacent = new Set<string>();
      for (let j = 0; j + 1 < sequence.length; j++) adjacent.add(`${sequence[j]}:${sequence[j + 1]}`);
      phrase =
        pairs.reduce(
          (s, [a, b]) => s + (adjacent.has(`${a}:${b}`) ? queryWeights.get(a)! + queryWeights.get(b)! : 0),
          0,
        ) / pairTotal;
    }
    const headingTerms = p.section ? new Set(termSequence(p.section.split(' > ').at(-1)!)) : undefined;
    const heading = headingTerms
      ? query.reduce((s, t) => s + (headingTerms.has(t) ? queryWeights.get(t)! : 0), 0) / total
      : 0;
    return (
      (WEIGHTS.coverage * coverage +
        WEIGHTS.proximity * proximity +
        WEIGHTS.phrase * phrase +
        WEIGHTS.heading * heading +
        WEIGHTS.prior * prior) /
      TOTAL
    );
  });
}

export function createOfflineReranker(): Reranker {
  return {
    name: 'offline',
    model: 'offline-lexical-rerank',
    async rerank(input): Promise<RerankResult[]> {
      const scores = offlineScores(input);
      return scores
        .map((score, index) => ({ index, score }))
        .sort((a, b) => b.score - a.score || a.index - b.index)
        .slice(0, input.topN);
    },
  };
}
