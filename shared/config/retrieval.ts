import * as z from '../zod.ts';
import { settingsPiece } from './core.ts';
import { int, optionalUrl, str } from './fields.ts';

// Retrieval in file chats: the packs' cache, the ranking, the rerank stage and the vector store.

export const retrievalSettings = settingsPiece(
  {
    // Packed vectors kept in memory by warm functions for retrieval.
    RETRIEVAL_CACHE_MB: z._default(int(0, 4_096), 256),
    // hybrid: dense and BM25 rankings fused (RRF); dense or lexical alone, to measure each.
    RETRIEVAL_MODE: z._default(z.enum(['hybrid', 'dense', 'lexical']), 'hybrid'),
    // The rerank stage after hybrid retrieval (docs/DECISIONS.md "Reranking"): offline (the lexical
    // index's phrase, proximity, heading and rare-word evidence; the default), bedrock (Amazon
    // Bedrock's Rerank API through the function's role), cohere (any Cohere-compatible /v1/rerank
    // API: Cohere, Jina, Voyage, self-hosted) or none (the retrieval order). A failure or a timeout
    // keeps the retrieval order; it is logged, never an error to the user.
    RERANK_PROVIDER: z._default(z.enum(['offline', 'bedrock', 'cohere', 'none']), 'offline'),
    // Passages of the fused ranking given to the reranker (it keeps the best RETRIEVAL_K of them).
    RERANK_CANDIDATES: z._default(int(1, 100), 32),
    // The whole rerank call's deadline; past it the retrieval order is kept.
    RERANK_TIMEOUT_MS: z._default(int(50, 60_000), 2_000),
    // Bedrock: the reranking model (id or foundation-model ARN); its region is BEDROCK_REGION.
    BEDROCK_RERANK_MODEL: z._default(str(), 'amazon.rerank-v1:0'),
    // Endpoint override of bedrock-agent-runtime (tests, VPC endpoints); unset: the region's.
    BEDROCK_AGENT_ENDPOINT: optionalUrl,
    // Cohere-compatible: the API's base URL (…/v1/rerank is appended unless the URL ends in /rerank),
    // its model and key.
    RERANK_URL: optionalUrl,
    RERANK_MODEL: z._default(str(), 'rerank-v3.5'),
    RERANK_API_KEY: z.optional(str()),
    // Where a file's vectors are searched (docs/DECISIONS.md "Vector store: two backends"): packs,
    // one S3 object per file loaded by the function (the default); s3vectors, Amazon S3 Vectors
    // (one index per user and embedding model in S3_VECTORS_BUCKET) for large libraries.
    VECTOR_STORE: z._default(z.enum(['packs', 's3vectors']), 'packs'),
    S3_VECTORS_BUCKET: z.optional(z.string().check(z.regex(/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/))),
    // The S3 Vectors stand-in's endpoint (npm start, tests); unset in AWS.
    S3_VECTORS_ENDPOINT: optionalUrl,
  },
  (settings) => [
    ...(settings.RERANK_PROVIDER === 'cohere' && !settings.RERANK_URL
      ? ['RERANK_PROVIDER: cohere needs RERANK_URL (the Cohere-compatible API, e.g. https://api.cohere.com)']
      : []),
    ...(settings.VECTOR_STORE === 's3vectors' && !settings.S3_VECTORS_BUCKET
      ? ['VECTOR_STORE: s3vectors needs S3_VECTORS_BUCKET (the vector bucket)']
      : []),
  ],
);
