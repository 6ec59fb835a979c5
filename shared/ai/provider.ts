import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { secretsClient } from '../clients.ts';
import { config, type Config } from '../config.ts';
import { createOfflineProvider } from './offline-provider.ts';
import { createOpenAiProvider } from './openai-provider.ts';
import type { AiProvider } from './types.ts';

// The AI provider of this cold start: OpenAI (or any compatible server) when a key is configured
// (OPENAI_API_KEY, or OPENAI_API_KEY_SECRET_ARN when deployed), the offline provider otherwise.

let cached: AiProvider | undefined;

export function aiProvider(): AiProvider {
  cached ??= createAiProvider(config());
  return cached;
}

export function createAiProvider(c: Config): AiProvider {
  const limits = { maxInputs: c.EMBEDDING_BATCH_SIZE, maxTokens: c.EMBEDDING_BATCH_MAX_TOKENS };
  const apiKey = c.OPENAI_API_KEY ?? (c.OPENAI_API_KEY_SECRET_ARN ? () => readApiKeySecret(c.OPENAI_API_KEY_SECRET_ARN!) : undefined);
  if (!apiKey) return createOfflineProvider(limits);
  return createOpenAiProvider({
    apiKey,
    ...(c.OPENAI_BASE_URL && { baseURL: c.OPENAI_BASE_URL }),
    chatModel: c.OPENAI_CHAT_MODEL,
    embeddingModel: c.OPENAI_EMBEDDING_MODEL,
    ...(c.OPENAI_EMBEDDING_DIMENSIONS && { embeddingDimensions: c.OPENAI_EMBEDDING_DIMENSIONS }),
    timeoutMs: c.OPENAI_TIMEOUT_MS,
    maxRetries: c.OPENAI_MAX_RETRIES,
    embeddingBatchSize: c.EMBEDDING_BATCH_SIZE,
    embeddingBatchMaxTokens: c.EMBEDDING_BATCH_MAX_TOKENS,
  });
}

/** The key stored in Secrets Manager: the plain key, or JSON with OPENAI_API_KEY / apiKey. */
async function readApiKeySecret(arn: string): Promise<string> {
  const out = await secretsClient().send(new GetSecretValueCommand({ SecretId: arn }));
  const raw = (out.SecretString ?? '').trim();
  let key = raw;
  if (raw.startsWith('{')) {
    const json = JSON.parse(raw) as Record<string, unknown>;
    key = String(json.OPENAI_API_KEY ?? json.apiKey ?? json.api_key ?? '');
  }
  if (!key) throw new Error(`The secret ${arn} holds no OpenAI API key`);
  return key;
}

/** One line for the start-up log. */
export function describeAiProvider(c: Config): string {
  if (c.OPENAI_API_KEY || c.OPENAI_API_KEY_SECRET_ARN) {
    const where = c.OPENAI_BASE_URL ? ` at ${c.OPENAI_BASE_URL}` : '';
    return `OpenAI-compatible (chat ${c.OPENAI_CHAT_MODEL}, embeddings ${c.OPENAI_EMBEDDING_MODEL}${where})`;
  }
  return 'offline (no OPENAI_API_KEY: no language model; file chats answer with the best-matching passages of their PDFs, lexical embeddings)';
}
