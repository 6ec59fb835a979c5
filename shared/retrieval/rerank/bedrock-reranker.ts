import { BedrockAgentRuntimeClient, RerankCommand } from '@aws-sdk/client-bedrock-agent-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { type Reranker, rerankText } from './reranker.ts';

// Amazon Bedrock's Rerank API (bedrock-agent-runtime, POST /rerank) through the function's IAM
// role (bedrock:Rerank, and bedrock:InvokeModel on the reranking model). One query, the
// candidates as inline text sources, numberOfResults the passages kept; the answer is
// { results: [{ index, relevanceScore }] }, best first. The API takes at most 1,000 sources of at
// most 32,000 characters; a chunk is far below that, and a longer text is cut (never refused).
// One retry at most: the whole stage has a deadline (RERANK_TIMEOUT_MS) and falls back to the
// retrieval order, so a retry storm buys nothing.

export interface BedrockRerankSettings {
  region: string;
  endpoint?: string | undefined;
  /** A model id (amazon.rerank-v1:0, cohere.rerank-v3-5:0) or a foundation-model ARN. */
  model: string;
  /** Tests only: otherwise the SDK's default chain (the Lambda role's variables). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

const MAX_TEXT_CHARS = 32_000;
const MAX_SOURCES = 1_000;

/** The partition of a region (aws, aws-cn, aws-us-gov). */
export const partitionOf = (region: string) =>
  region.startsWith('cn-') ? 'aws-cn' : region.startsWith('us-gov-') ? 'aws-us-gov' : 'aws';

/** The reranking model's ARN, as the API wants it. */
export const rerankModelArn = (model: string, region: string) =>
  model.startsWith('arn:') ? model : `arn:${partitionOf(region)}:bedrock:${region}::foundation-model/${model}`;

export function createBedrockReranker(settings: BedrockRerankSettings): Reranker {
  const client = new BedrockAgentRuntimeClient({
    region: settings.region,
    ...(settings.endpoint && { endpoint: settings.endpoint }),
    ...(settings.credentials && { credentials: settings.credentials }),
    maxAttempts: 2,
    requestHandler: new NodeHttpHandler({ connectionTimeout: 2_000 }),
  });
  const modelArn = rerankModelArn(settings.model, settings.region);
  const cut = (text: string) => (text.length > MAX_TEXT_CHARS ? text.slice(0, MAX_TEXT_CHARS) : text) || ' ';
  return {
    name: 'bedrock',
    model: settings.model,
    async rerank({ query, passages, topN, signal }) {
      const sources = passages.slice(0, MAX_SOURCES);
      const out = await client.send(
        new RerankCommand({
          queries: [{ type: 'TEXT', textQuery: { text: cut(query) } }],
          sources: sources.map((p) => ({
            type: 'INLINE',
            inlineDocumentSource: { type: 'TEXT', textDocument: { text: cut(rerankText(p)) } },
          })),
          rerankingConfiguration: {
            type: 'BEDROCK_RERANKING_MODEL',
            bedrockRerankingConfiguration: {
              numberOfResults: Math.min(topN, sources.length),
              modelConfiguration: { modelArn },
            },
          },
        }),
        { abortSignal: signal },
      );
      return (out.results ?? []).map((r) => ({ index: r.index ?? -1, score: r.relevanceScore ?? 0 }));
    },
  };
}
