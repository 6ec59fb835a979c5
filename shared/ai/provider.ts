import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { secretsClient } from '../clients.ts';
import { config, type Config } from '../config.ts';
import { chosenProvider } from '../config/ai.ts';
import type { BedrockSettings } from './bedrock-provider.ts';
import type { AiProvider } from './types.ts';
import { withReplyMetrics } from './reply-metrics.ts';

// The AI provider of this cold start, chosen by AI_PROVIDER: `openai` (or any compatible server),
// `bedrock` (Amazon Bedrock through the function's IAM role) or `offline`. Unset: OpenAI when a key
// is configured (OPENAI_API_KEY, or OPENAI_API_KEY_SECRET_ARN when deployed), offline otherwise.
// Each provider module is imported only when chosen, so a function loads one model SDK, not all
// of them (bench cold-start measures send-message with each).

let cached: Promise<AiProvider> | undefined;

/** The provider of this cold start, its replies measured (created once; a failed creation is retried by the next call). */
export function aiProvider(): Promise<AiProvider> {
  cached ??= createAiProvider(config()).then(withReplyMetrics, (err: unknown) => {
    cached = undefined;
    throw err;
  });
  return cached;
}

export async function createAiProvider(
  settings: Config,
  overrides: Pick<BedrockSettings, 'credentials'> = {},
): Promise<AiProvider> {
  const limits = { maxInputs: settings.EMBEDDING_BATCH_SIZE, maxTokens: settings.EMBEDDING_BATCH_MAX_TOKENS };
  switch (chosenProvider(settings)) {
    case 'offline': {
      const { createOfflineProvider } = await import('./offline-provider.ts');
      return createOfflineProvider(limits, { deltaDelayMs: settings.OFFLINE_STREAM_DELAY_MS });
    }
    case 'bedrock': {
      const { createBedrockProvider } = await import('./bedrock-provider.ts');
      return createBedrockProvider({
        region: settings.BEDROCK_REGION ?? settings.AWS_REGION,
        ...(settings.BEDROCK_ENDPOINT && { endpoint: settings.BEDROCK_ENDPOINT }),
        chatModel: settings.BEDROCK_CHAT_MODEL,
        embeddingModel: settings.BEDROCK_EMBEDDING_MODEL,
        ...(settings.BEDROCK_EMBEDDING_DIMENSIONS && { embeddingDimensions: settings.BEDROCK_EMBEDDING_DIMENSIONS }),
        embeddingConcurrency: settings.BEDROCK_EMBEDDING_CONCURRENCY,
        timeoutMs: settings.BEDROCK_TIMEOUT_MS,
        maxRetries: settings.BEDROCK_MAX_RETRIES,
        embeddingBatchSize: settings.EMBEDDING_BATCH_SIZE,
        embeddingBatchMaxTokens: settings.EMBEDDING_BATCH_MAX_TOKENS,
        ...overrides,
      });
    }
    case 'openai': {
      const { createOpenAiProvider } = await import('./openai-provider.ts');
      const secretArn = settings.OPENAI_API_KEY_SECRET_ARN;
      return createOpenAiProvider({
        apiKey: settings.OPENAI_API_KEY ?? (() => readApiKeySecret(secretArn!)),
        ...(settings.OPENAI_BASE_URL && { baseURL: settings.OPENAI_BASE_URL }),
        chatModel: settings.OPENAI_CHAT_MODEL,
        embeddingModel: settings.OPENAI_EMBEDDING_MODEL,
        ...(settings.OPENAI_EMBEDDING_DIMENSIONS && { embeddingDimensions: settings.OPENAI_EMBEDDING_DIMENSIONS }),
        timeoutMs: settings.OPENAI_TIMEOUT_MS,
        maxRetries: settings.OPENAI_MAX_RETRIES,
        embeddingBatchSize: settings.EMBEDDING_BATCH_SIZE,
        embeddingBatchMaxTokens: settings.EMBEDDING_BATCH_MAX_TOKENS,
      });
    }
  }
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
export function describeAiProvider(settings: Config): string {
  switch (chosenProvider(settings)) {
    case 'openai': {
      const where = settings.OPENAI_BASE_URL ? ` at ${settings.OPENAI_BASE_URL}` : '';
      return `OpenAI-compatible (chat ${settings.OPENAI_CHAT_MODEL}, embeddings ${settings.OPENAI_EMBEDDING_MODEL}${where})`;
    }
    case 'bedrock': {
      const where = settings.BEDROCK_ENDPOINT
        ? ` at ${settings.BEDROCK_ENDPOINT}`
        : ` in ${settings.BEDROCK_REGION ?? settings.AWS_REGION}`;
      const dims = settings.BEDROCK_EMBEDDING_MODEL.startsWith('amazon.titan')
        ? ` (${settings.BEDROCK_EMBEDDING_DIMENSIONS ?? 1024} dimensions)`
        : '';
      return `Amazon Bedrock (chat ${settings.BEDROCK_CHAT_MODEL}, embeddings ${settings.BEDROCK_EMBEDDING_MODEL}${dims}${where})`;
    }
    case 'offline':
      return 'offline (no OPENAI_API_KEY: no language model; file chats answer with the best-matching passages of their PDFs, lexical embeddings)';
  }
}
