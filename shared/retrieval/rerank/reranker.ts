import '../../config/ai.ts';
import '../../config/retrieval.ts';
import type { Config } from '../../config.ts';
import { asError } from '../../errors.ts';
import { logger } from '../../observability/logger.ts';
import { createOfflineReranker } from './offline-reranker.ts';

// The rerank stage after hybrid retrieval (docs/DECISIONS.md "Reranking"): the fused ranking's
// best candidates go to one reranker, chosen by RERANK_PROVIDER, which orders them by relevance to
// the query; the retriever keeps the best k of that order. A reranker that fails, answers
// something unusable or does not answer within RERANK_TIMEOUT_MS changes nothing: the retrieval
// order is kept and the failure logged. A reply is never refused because of a reranker.

export interface RerankPassage {
  text: string;
  /** The heading path the passage sits under ("A > B"), when known. */
  section?: string | undefined;
}

export interface RerankInput {
  query: string;
  /** The candidates, in retrieval order (best first). */
  passages: RerankPassage[];
  /** How many of them the caller keeps. */
  topN: number;
  /** How rare each query term (its hash, terms.ts) is in the searched files; from their lexical indexes. */
  termWeights?: () => Map<number, number>;
  signal: AbortSignal;
}

export interface RerankResult {
  /** Index into the passages given. */
  index: number;
  /** Relevance, higher is better (each reranker's own scale). */
  score: number;
}

export interface Reranker {
  /** offline, bedrock or cohere. */
  name: string;
  model: string;
  /** The passages' best first (at most topN of them; fewer is allowed). */
  rerank(input: RerankInput): Promise<RerankResult[]>;
}

/** The text a remote reranker reads for a passage: its innermost heading, then its text. */
export const rerankText = (p: RerankPassage) => (p.section ? `${p.section.split(' > ').at(-1)}\n${p.text}` : p.text);

/** What the stage gives back: an order of the passages (indexes) and whether the reranker made it. */
export interface RerankOutcome {
  order: number[];
  reranked: boolean;
}

/**
 * The passages' order by the reranker, the best topN; the retrieval order's first topN when there
 * is no reranker, when it fails or times out, or when its answer is not a usable order (an
 * index out of range or repeated). A reranker that returns fewer than topN is followed by the
 * rest in retrieval order.
 */
export async function rerankStage(
  reranker: Reranker | undefined,
  input: Omit<RerankInput, 'signal'>,
  timeoutMs: number,
): Promise<RerankOutcome> {
  const n = input.passages.length;
  const keep = Math.min(input.topN, n);
  const retrievalOrder = (): RerankOutcome => ({ order: Array.from({ length: keep }, (_, i) => i), reranked: false });
  if (!reranker || n <= 1 || keep <= 0) return retrievalOrder();
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new Error(`the reranker did not answer within ${timeoutMs} ms`);
      err.name = 'RerankTimeout';
      controller.abort(err);
      reject(err);
    }, timeoutMs);
  });
  const started = performance.now();
  try {
    const results = await Promise.race([reranker.rerank({ ...input, signal: controller.signal }), deadline]);
    const seen = new Set<number>();
    for (const r of results) {
      if (!Number.isInteger(r.index) || r.index < 0 || r.index >= n || seen.has(r.index))
        throw new Error(`the reranker answered an unusable index (${r.index} of ${n} passages)`);
      seen.add(r.index);
    }
    const order = results.map((r) => r.index);
    for (let i = 0; order.length < keep && i < n; i++) if (!seen.has(i)) order.push(i);
    return { order: order.slice(0, keep), reranked: true };
  } catch (err) {
    logger.warn('rerank failed; the retrieval order is kept', {
      reranker: reranker.name,
      model: reranker.model,
      passages: n,
      ms: Math.round(performance.now() - started),
      error: asError(err),
    });
    return retrievalOrder();
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The reranker a configuration chooses (undefined: none). The remote ones are imported on their
 * first call, so a function that never reranks remotely does not load their clients.
 */
export function rerankerFor(config: Config): Reranker | undefined {
  switch (config.RERANK_PROVIDER) {
    case 'none':
      return undefined;
    case 'offline':
      return createOfflineReranker();
    case 'bedrock':
      return lazily('bedrock', config.BEDROCK_RERANK_MODEL, async () => {
        const { createBedrockReranker } = await import('./bedrock-reranker.ts');
        return createBedrockReranker({
          region: config.BEDROCK_REGION ?? config.AWS_REGION,
          endpoint: config.BEDROCK_AGENT_ENDPOINT,
          model: config.BEDROCK_RERANK_MODEL,
        });
      });
    case 'cohere':
      return lazily('cohere', config.RERANK_MODEL, async () => {
        const { createCohereReranker } = await import('./cohere-reranker.ts');
        return createCohereReranker({
          url: config.RERANK_URL!,
          model: config.RERANK_MODEL,
          apiKey: config.RERANK_API_KEY,
        });
      });
  }
}

function lazily(name: string, model: string, load: () => Promise<Reranker>): Reranker {
  let loaded: Promise<Reranker> | undefined;
  return {
    name,
    model,
    async rerank(input) {
      loaded ??= load().catch((err: unknown) => {
        loaded = undefined;
        throw err;
      });
      return (await loaded).rerank(input);
    },
  };
}
