// The figures of `npm run eval`, computed from each question's outcome (pure, so a unit test can
// check them on a tiny set with known answers: test/unit/eval-metrics.test.ts).
//   recall@k            share of questions with a source on an answering page among the first k
//   MRR                 mean of 1 / rank of the first source on an answering page (0 when none)
//   citation precision  share of the reply's [n] markers whose source n exists, is verified (its quote
//                       found on its page) and is on an answering page
//   answer length       median characters of the replies
//   latency p50 / p95   time of the request that asked the question
//   groundedness, relevance  the judge's mean scores (1–5), over the questions it scored

export interface EvalSource {
  fileName?: string;
  page: number;
  verified?: boolean;
}

export interface ScoredQuestion {
  /** The document and pages that answer it. */
  file: string;
  pages: number[];
  sources: EvalSource[];
  /** The reply's text. */
  answer: string;
  latencyMs: number;
  judge?: { groundedness: number; relevance: number } | undefined;
}

export const RECALL_AT = [1, 3, 5, 8] as const;

/** The 1-based [n] markers of a reply (also [1, 2] and [1][2]). */
export function markersOf(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(/\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g))
    for (const n of m[1]!.split(',')) out.push(Number(n.trim()));
  return out;
}

const onAnswer = (q: Pick<ScoredQuestion, 'file' | 'pages'>, s: EvalSource | undefined) =>
  !!s && s.fileName === q.file && q.pages.includes(s.page);

/** The 1-based rank of the first source on an answering page, or undefined. */
export function firstHit(q: Pick<ScoredQuestion, 'file' | 'pages' | 'sources'>): number | undefined {
  const i = q.sources.findIndex((s) => onAnswer(q, s));
  return i < 0 ? undefined : i + 1;
}

/** The quantile q (0–1) of the values, by the nearest-rank method; NaN for none. */
export function quantile(values: number[], q: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export interface EvalFigures {
  questions: number;
  recall: Record<number, number>;
  mrr: number;
  citationPrecision: number;
  markers: number;
  answerChars: number;
  latencyP50: number;
  latencyP95: number;
  groundedness: number;
  relevance: number;
  judged: number;
}

export function evalFigures(set: ScoredQuestion[], recallAt: readonly number[] = RECALL_AT): EvalFigures {
  const n = set.length;
  const hits = set.map(firstHit);
  const recall = Object.fromEntries(
    recallAt.map((k) => [k, n ? hits.filter((h) => h !== undefined && h <= k).length / n : Number.NaN]),
  );
  let markers = 0;
  let good = 0;
  for (const q of set) {
    for (const m of markersOf(q.answer)) {
      markers++;
      const s = q.sources[m - 1];
      if (s?.verified === true && onAnswer(q, s)) good++;
    }
  }
  const judged = set.filter((q) => q.judge);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);
  return {
    questions: n,
    recall,
    mrr: n ? hits.reduce<number>((sum, h) => sum + (h ? 1 / h : 0), 0) / n : Number.NaN,
    citationPrecision: markers ? good / markers : Number.NaN,
    markers,
    answerChars: quantile(
      set.map((q) => q.answer.length),
      0.5,
    ),
    latencyP50: quantile(
      set.map((q) => q.latencyMs),
      0.5,
    ),
    latencyP95: quantile(
      set.map((q) => q.latencyMs),
      0.95,
    ),
    groundedness: mean(judged.map((q) => q.judge!.groundedness)),
    relevance: mean(judged.map((q) => q.judge!.relevance)),
    judged: judged.length,
  };
}
