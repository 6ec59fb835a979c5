import * as z from '../zod.ts';
import { settingsPiece } from './core.ts';
import { int, optionalUrl, str } from './fields.ts';

// The AI provider: which one, its models, endpoints, timeouts and embedding batches.

export const aiSettings = settingsPiece(
  {
    // AI provider: `openai`, `bedrock` or `offline`; unset: OpenAI (or any compatible server) when
    // a key is set, the offline provider otherwise.
    AI_PROVIDER: z.optional(z.enum(['openai', 'bedrock', 'offline'])),
    OPENAI_API_KEY: z.optional(str()),
    OPENAI_API_KEY_SECRET_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
    OPENAI_BASE_URL: optionalUrl,
    OPENAI_CHAT_MODEL: z._default(str(), 'gpt-4o-mini'),
    OPENAI_EMBEDDING_MODEL: z._default(str(), 'text-embedding-3-small'),
    // Output size of the embeddings, sent as `dimensions` when set (text-embedding-3-* accept it).
    OPENAI_EMBEDDING_DIMENSIONS: z.optional(int(1, 8192)),
    OPENAI_TIMEOUT_MS: z._default(int(1000, 15 * 60 * 1000), 60_000),
    OPENAI_MAX_RETRIES: z._default(int(0, 10), 3),
    // Amazon Bedrock (AI_PROVIDER=bedrock), through the function's IAM role. A model id or an
    // inference profile (id or ARN) for chat; Titan Text Embeddings V2 or Cohere Embed v3 for embeddings.
    BEDROCK_REGION: z.optional(
      z.string().check(z.regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'must be an AWS region such as us-east-1')),
    ),
    // Endpoint override (tests, VPC endpoints); unset: the region's public endpoint.
    BEDROCK_ENDPOINT: optionalUrl,
    BEDROCK_CHAT_MODEL: z._default(str(), 'amazon.nova-lite-v1:0'),
    BEDROCK_EMBEDDING_MODEL: z._default(
      z.enum(['amazon.titan-embed-text-v2:0', 'cohere.embed-english-v3', 'cohere.embed-multilingual-v3']),
      'amazon.titan-embed-text-v2:0',
    ),
    // Titan Text Embeddings V2 only (Cohere Embed v3 is always 1024).
    BEDROCK_EMBEDDING_DIMENSIONS: z.optional(z.pipe(z.enum(['256', '512', '1024']), z.transform(Number))),
    // Titan V2 embeds one text per request: this many requests at once per embed call.
    BEDROCK_EMBEDDING_CONCURRENCY: z._default(int(1, 64), 8),
    BEDROCK_TIMEOUT_MS: z._default(int(1000, 15 * 60 * 1000), 60_000),
    // Attempts after the first (throttling, 5xx, timeouts), with the SDK's backoff.
    BEDROCK_MAX_RETRIES: z._default(int(0, 10), 3),
    EMBEDDING_BATCH_SIZE: z._default(int(1, 2048), 2048),
    EMBEDDING_BATCH_MAX_TOKENS: z._default(int(1000, 1_000_000), 300_000),
    EMBEDDING_CONCURRENCY: z._default(int(1, 32), 4),
    /** The offline provider's pause between streamed words (a readable pace; 0: none). */
    OFFLINE_STREAM_DELAY_MS: z._default(int(0, 1_000), 30),
  },
  (settings) => {
    const out: string[] = [];
    if (settings.AI_PROVIDER === 'openai' && !settings.OPENAI_API_KEY && !settings.OPENAI_API_KEY_SECRET_ARN) {
      out.push('AI_PROVIDER: openai needs OPENAI_API_KEY (or OPENAI_API_KEY_SECRET_ARN)');
    }
    if (
      settings.BEDROCK_EMBEDDING_DIMENSIONS &&
      settings.BEDROCK_EMBEDDING_DIMENSIONS !== 1024 &&
      settings.BEDROCK_EMBEDDING_MODEL.startsWith('cohere.')
    ) {
      out.push(`BEDROCK_EMBEDDING_DIMENSIONS: ${settings.BEDROCK_EMBEDDING_MODEL} always returns 1024 dimensions`);
    }
    return out;
  },
);

type AiSettings = z.infer<typeof aiSettings>;

/**
 * The AI provider a function with this configuration uses: AI_PROVIDER, else OpenAI when a key
 * is configured (OPENAI_API_KEY, or OPENAI_API_KEY_SECRET_ARN when deployed), else offline.
 */
export function chosenProvider(
  settings: Pick<AiSettings, 'AI_PROVIDER' | 'OPENAI_API_KEY' | 'OPENAI_API_KEY_SECRET_ARN'>,
): NonNullable<AiSettings['AI_PROVIDER']> {
  if (settings.AI_PROVIDER) return settings.AI_PROVIDER;
  return settings.OPENAI_API_KEY || settings.OPENAI_API_KEY_SECRET_ARN ? 'openai' : 'offline';
}
