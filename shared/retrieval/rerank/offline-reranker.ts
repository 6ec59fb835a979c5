import { indexTerms, MAX_QUERY_TERMS, termHash } from '../terms.ts';
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

/**
 * A passage's terms as slots of the query's distinct terms (-1: not a query term), so that every
 * figure below is a pass over small integer arrays (50 candidates of ~800 tokens in a few ms).
 */
function slotsOf(text: string, slot: Map<string, number>): Int16Array {
  const terms = indexTerms(text);
  const out = new Int16Array(terms.length);
  for (let i = 0; i < terms.length; i++) out[i] = slot.get(terms[i]!) ?? -1;
  return out;
}

/** The largest weight of distinct query terms within any WINDOW consecutive terms. */
function densestWindow(slots: Int16Array, weight: Float64Array): number {
  const inWindow = new Int32Array(weight.length);
  let sum = 0;
  let best = 0;
  for (let i = 0; i < slots.length; i++) {
    const t = slots[i]!;
    if (t >= 0 && inWindow[t]!++ === 0) sum += weight[t]!;
    const out = i - WINDOW >= 0 ? slots[i - WINDOW]! : -1;
    if (out >= 0 && --inWindow[out]! === 0) sum -= weight[out]!;
    if (sum > best) best = sum;
  }
  return best;
}

/** Scores the candidates; exported for the tests' sake (the figures behind an order). */
export function offlineScores(input: Pick<RerankInput, 'query' | 'passages' | 'termWeights'>): number[] {
  const queryTerms = indexTerms(input.query);
  const distinct = [...new Set(queryTerms)].slice(0, MAX_QUERY_TERMS);
  const slot = new Map(distinct.map((t, i) => [t, i]));
  const q = distinct.length;
  const passages = input.passages.map((p) => slotsOf(p.text, slot));
  const present = passages.map((slots) => {
    const has = new Uint8Array(q);
    for (const t of slots) if (t >= 0) has[t] = 1;
    return has;
  });
  // Rarity: the searched files' IDF when given for every term; else over the candidates themselves.
  const given = input.termWeights?.();
  const hashes = distinct.map(termHash);
  const n = input.passages.length;
  const weight = Float64Array.from(distinct, (_, t) => {
    const known = given?.get(hashes[t]!);
    if (known !== undefined && hashes.every((h) => given!.has(h))) return known;
    const df = present.reduce((c, has) => c + has[t]!, 0);
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  });
  const total = weight.reduce((a, b) => a + b, 0);
  // The query's consecutive pairs of distinct terms, as a q × q table of the pair's weight.
  const pairWeight = new Float64Array(q * q);
  for (let i = 0; i + 1 < queryTerms.length; i++) {
    const a = slot.get(queryTerms[i]!);
    const b = slot.get(queryTerms[i + 1]!);
    if (a !== undefined && b !== undefined && a !== b) pairWeight[a * q + b] = weight[a]! + weight[b]!;
  }
  const pairTotal = pairWeight.reduce((x, y) => x + y, 0);

  return input.passages.map((p, i) => {
    const prior = 1 - i / n;
    if (total <= 0) return (WEIGHTS.prior * prior) / TOTAL;
    const slots = passages[i]!;
    const has = present[i]!;
    let coverage = 0;
    for (let t = 0; t < q; t++) if (has[t]) coverage += weight[t]!;
    coverage /= total;
    const proximity = densestWindow(slots, weight) / total;
    let phrase = 0;
    if (pairTotal > 0) {
      const seen = new Uint8Array(q * q);
      for (let j = 0; j + 1 < slots.length; j++) {
        const a = slots[j]!;
        const b = slots[j + 1]!;
        if (a < 0 || b < 0) continue;
        const k = a * q + b;
        if (pairWeight[k]! > 0 && !seen[k]) {
          seen[k] = 1;
          phrase += pairWeight[k]!;
        }
      }
      phrase /= pairTotal;
    }
    let heading = 0;
    if (p.section) {
      const inHeading = new Uint8Array(q);
      for (const t of slotsOf(p.section.split(' > ').at(-1)!, slot)) if (t >= 0) inHeading[t] = 1;
      for (let t = 0; t < q; t++) if (inHeading[t]) heading += weight[t]!;
      heading /= total;
    }
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
