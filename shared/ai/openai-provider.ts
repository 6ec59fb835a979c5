import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { packBatches } from '../batches.ts';
import { AiProviderError } from './errors.ts';
import { streamedReply } from './streamed-reply.ts';
import { estimateUsage, modelMessages } from './prompt.ts';
import { estimateTokens } from './tokens.ts';
import type { AiProvider, ChatInput, EmbeddingResult, Usage } from './types.ts';

// OpenAI, or any server speaking its API (OPENAI_BASE_URL), through the official SDK.
// Retries: the SDK retries connection failures, timeouts, 408/409/429 and 5xx with exponential
// backoff and jitter (0.5 s doubling to 8 s), honouring retry-after; `maxRetries` bounds it.
// Timeouts: the SDK's `timeout` covers each attempt until the response starts; a stream that
// then goes quiet for as long is aborted here (the SDK would wait forever).

export interface OpenAiSettings {
  /** The key, or a function resolving it (Secrets Manager), called once on first use. */
  apiKey: string | (() => Promise<string>);
  baseURL?: string;
  chatModel: string;
  embeddingModel: string;
  /** Sent as `dimensions` when set (text-embedding-3-* models accept it). */
  embeddingDimensions?: number;
  timeoutMs: number;
  maxRetries: number;
  embeddingBatchSize: number;
  embeddingBatchMaxTokens: number;
}

/** Output sizes of OpenAI's embedding models, for when no `dimensions` is configured. */
const KNOWN_DIMENSIONS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

const toUsage = (
  u: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | null | undefined,
): Usage | undefined =>
  u
    ? {
        promptTokens: u.prompt_tokens ?? 0,
        completionTokens: u.completion_tokens ?? 0,
        totalTokens: u.total_tokens ?? (u.prompt_tokens ?? 0) + (u.completion_tokens ?? 0),
      }
    : undefined;

/** Classifies an SDK error; an abort by the caller is passed through unchanged. */
function classify(err: unknown): unknown {
  if (err instanceof AiProviderError || err instanceof APIUserAbortError) return err;
  if (err instanceof APIConnectionTimeoutError)
    return new AiProviderError('timeout', 'The AI provider timed out', { cause: err });
  if (err instanceof APIConnectionError)
    return new AiProviderError('unavailable', 'Could not reach the AI provider', { cause: err });
  if (err instanceof APIError) {
    const status = err.status;
    const retryAfter = Number(err.headers?.get?.('retry-after'));
    const details = {
      ...(status !== undefined && { status }),
      ...(Number.isFinite(retryAfter) && retryAfter > 0 && { retryAfterSeconds: retryAfter }),
      cause: err,
    };
    if (status === 429) return new AiProviderError('rate-limited', 'The AI provider rate-limited the request', details);
    if (status !== undefined && status >= 500)
      return new AiProviderError('unavailable', `The AI provider answered ${status}`, details);
    return new AiProviderError(
      'failed',
      `The AI provider refused the request (${status ?? 'error'}): ${err.message}`,
      details,
    );
  }
  return err;
}

export function createOpenAiProvider(settings: OpenAiSettings): AiProvider {
  let client: Promise<OpenAI> | undefined;
  const sdk = () =>
    (client ??= (async () =>
      new OpenAI({
        apiKey: typeof settings.apiKey === 'string' ? settings.apiKey : await settings.apiKey(),
        ...(settings.baseURL && { baseURL: settings.baseURL }),
        timeout: settings.timeoutMs,
        maxRetries: settings.maxRetries,
      }))().catch((err) => {
      client = undefined; // a failed secret read is retried by the next call
      throw err;
    }));

  const request = (input: ChatInput) => ({
    model: settings.chatModel,
    messages: modelMessages(input),
    max_completion_tokens: input.maxTokens,
    ...(input.temperature !== undefined && { temperature: input.temperature }),
  });

  return {
    name: 'openai',
    chatModel: settings.chatModel,
    embeddingModel: settings.embeddingModel,
    embeddingDimensions: settings.embeddingDimensions ?? KNOWN_DIMENSIONS[settings.embeddingModel] ?? 1536,
    embeddingLimits: { maxInputs: settings.embeddingBatchSize, maxTokens: settings.embeddingBatchMaxTokens },

    async reply(input) {
      try {
        const openai = await sdk();
        const completion = await openai.chat.completions.create(
          request(input),
          input.signal ? { signal: input.signal } : {},
        );
        const text = completion.choices[0]?.message?.content ?? '';
        return { text, usage: toUsage(completion.usage) ?? estimateUsage(input, text) };
      } catch (err) {
        throw classify(err);
      }
    },

    streamReply(input) {
      return streamedReply(input, settings.timeoutMs, {
        open: async (signal) =>
          (await sdk()).chat.completions.create(
            { ...request(input), stream: true, stream_options: { include_usage: true } },
            { signal },
          ),
        read: (chunk) => ({
          delta: chunk.choices[0]?.delta?.content,
          finished: Boolean(chunk.choices[0]?.finish_reason),
          usage: toUsage(chunk.usage),
        }),
        classify,
        // The SDK's own abort error: the caller's abort, told apart after the stream.
        keeps: (classified) => classified instanceof APIUserAbortError,
      });
    },

    async embed(texts, options = {}): Promise<EmbeddingResult> {
      const vectors: Float32Array[] = [];
      let tokens = 0;
      try {
        const openai = await sdk();
        for (const batch of batches(texts, settings.embeddingBatchSize, settings.embeddingBatchMaxTokens)) {
          const out = await openai.embeddings.create(
            {
              model: settings.embeddingModel,
              input: batch,
              encoding_format: 'base64',
              ...(settings.embeddingDimensions && { dimensions: settings.embeddingDimensions }),
            },
            options.signal ? { signal: options.signal } : {},
          );
          const ordered = [...out.data].sort((a, b) => a.index - b.index);
          for (const item of ordered) vectors.push(decodeVector(item.embedding as unknown as string | number[]));
          tokens += out.usage?.total_tokens ?? batch.reduce((n, t) => n + estimateTokens(t), 0);
        }
      } catch (err) {
        throw classify(err);
      }
      return { vectors, tokens };
    },
  };
}

/** base64 little-endian float32 (what `encoding_format: 'base64'` returns), or a number list. */
function decodeVector(embedding: string | number[]): Float32Array {
  if (Array.isArray(embedding)) return Float32Array.from(embedding);
  const bytes = Buffer.from(embedding, 'base64');
  // Copy into an aligned buffer (a Buffer may sit at any offset of its pool).
  const out = new Float32Array(bytes.byteLength / 4);
  new Uint8Array(out.buffer).set(bytes);
  return out;
}

/** Splits inputs into requests of at most `maxInputs` texts and about `maxTokens` tokens. */
export const batches = (texts: string[], maxInputs: number, maxTokens: number): string[][] =>
  packBatches(texts, { maxItems: maxInputs, maxWeight: maxTokens }, estimateTokens);
