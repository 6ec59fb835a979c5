import * as z from '../../zod.ts';
import { type Reranker, rerankText } from './reranker.ts';

// Any Cohere-compatible rerank API (Cohere, Jina, Voyage, self-hosted servers such as Hugging
// Face's text-embeddings-inference or Infinity): POST {RERANK_URL}/v1/rerank (or RERANK_URL itself
// when it ends in /rerank, e.g. Cohere's /v2/rerank) with { model, query, documents, top_n },
// Authorization: Bearer {RERANK_API_KEY} when a key is set; the answer is
// { results: [{ index, relevance_score }] }, best first. An error is a non-2xx status with
// { message } (Cohere) or another body; either way it is thrown with the status, and the stage
// keeps the retrieval order. The answer is validated (zod) before it is used.

export interface CohereRerankSettings {
  /** The API's base URL (https://api.cohere.com), or the full /rerank endpoint. */
  url: string;
  model: string;
  apiKey?: string | undefined;
}

/** Cohere's documented bound on documents per request. */
const MAX_DOCUMENTS = 1_000;
/** A body larger than this is not a rerank answer of ≤ 1,000 results. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

const answerSchema = z.object({
  results: z.array(z.object({ index: z.number().check(z.int()), relevance_score: z.number() })),
});

export class RerankApiError extends Error {
  override name = 'RerankApiError';
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** The endpoint of a base URL: /v1/rerank appended unless the path already ends in /rerank. */
export function rerankEndpoint(url: string): string {
  const u = new URL(url);
  if (!/\/rerank\/?$/.test(u.pathname)) u.pathname = `${u.pathname.replace(/\/+$/, '')}/v1/rerank`;
  return u.toString();
}

export function createCohereReranker(settings: CohereRerankSettings): Reranker {
  const endpoint = rerankEndpoint(settings.url);
  return {
    name: 'cohere',
    model: settings.model,
    async rerank({ query, passages, topN, signal }) {
      const documents = passages.slice(0, MAX_DOCUMENTS).map(rerankText);
      const res = await fetch(endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...(settings.apiKey && { authorization: `Bearer ${settings.apiKey}` }),
        },
        body: JSON.stringify({ model: settings.model, query, documents, top_n: Math.min(topN, documents.length) }),
        signal,
      });
      const length = Number(res.headers.get('content-length') ?? 0);
      if (length > MAX_RESPONSE_BYTES) {
        await res.body?.cancel();
        throw new RerankApiError(`rerank answer of ${length} bytes`, res.status);
      }
      const text = await res.text();
      if (!res.ok) {
        let message = text.slice(0, 300);
        try {
          message = String((JSON.parse(text) as { message?: unknown }).message ?? message);
        } catch {
          // not JSON: the text itself
        }
        throw new RerankApiError(`rerank API answered ${res.status}: ${message}`, res.status);
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new RerankApiError('rerank API answered something that is not JSON', res.status);
      }
      const parsed = answerSchema.safeParse(json);
      if (!parsed.success) throw new RerankApiError('rerank API answered without results', res.status);
      return parsed.data.results.map((r) => ({ index: r.index, score: r.relevance_score }));
    },
  };
}
