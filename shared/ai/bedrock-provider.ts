import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  InvokeModelCommand,
  type ContentBlock,
  type Message,
  type SystemContentBlock,
  type TokenUsage,
} from '@aws-sdk/client-bedrock-runtime';
import { traced } from '../observability/tracing.ts';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { mapLimit } from '../map-limit.ts';
import * as z from '../zod.ts';
import { embeddingModelSpec, type BedrockEmbeddingModel } from './bedrock-models.ts';
import { AiProviderError } from './errors.ts';
import { estimateUsage, modelMessages, type ModelMessage } from './prompt.ts';
import { estimateTokens } from './tokens.ts';
import { streamedReply } from './streamed-reply.ts';
import type { AiProvider, ChatInput, EmbeddingResult, Usage } from './types.ts';

// Amazon Bedrock through the function's IAM role: chat with Converse / ConverseStream (any model
// or inference profile that speaks them), embeddings with InvokeModel (Titan Text Embeddings V2:
// one text per request, run a few at once; Cohere Embed v3: up to 96 texts per request).
// Retries: the SDK's standard strategy retries throttling (ThrottlingException, 429), 5xx and
// timeouts with exponential backoff and jitter, before a response starts; `maxRetries` bounds it.
// Timeouts: the socket may stay quiet for `timeoutMs` (before and during a stream), after which
// the attempt fails as a timeout.

export interface BedrockSettings {
  region: string;
  /** Endpoint override (tests, VPC endpoints). */
  endpoint?: string;
  /** Model id, inference profile id or ARN. */
  chatModel: string;
  embeddingModel: BedrockEmbeddingModel;
  /** Titan V2: 256, 512 or 1024 (default 1024). */
  embeddingDimensions?: number;
  /** Titan V2 requests in flight at once within one embed call. */
  embeddingConcurrency: number;
  timeoutMs: number;
  maxRetries: number;
  /** Logical batch size offered to the pipeline (what one embed call may be given). */
  embeddingBatchSize: number;
  embeddingBatchMaxTokens: number;
  /** Tests only: otherwise the SDK's default chain (the Lambda role's variables). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

const THROTTLING = new Set([
  'ThrottlingException',
  'TooManyRequestsException',
  'ModelNotReadyException',
  'ServiceQuotaExceededException',
]);
const UNAVAILABLE = new Set([
  'ServiceUnavailableException',
  'InternalServerException',
  'ModelStreamErrorException',
  'ModelErrorException',
]);
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ERR_STREAM_PREMATURE_CLOSE',
]);

type SdkError = Error & {
  code?: string;
  $metadata?: { httpStatusCode?: number };
  $response?: { headers?: Record<string, string> };
};

/** Classifies an SDK error the way openai-provider.ts does; an abort by the caller passes through unchanged. */
function classifyBedrockError(err: unknown): unknown {
  if (err instanceof AiProviderError || !(err instanceof Error)) return err;
  const e = err as SdkError;
  if (e.name === 'AbortError') return err;
  const status = e.$metadata?.httpStatusCode;
  const retryAfter = Number(e.$response?.headers?.['retry-after']);
  const details = {
    ...(status !== undefined && { status }),
    ...(Number.isFinite(retryAfter) && retryAfter > 0 && { retryAfterSeconds: retryAfter }),
    cause: err,
  };
  if (e.name === 'TimeoutError' || e.name === 'ModelTimeoutException' || e.code === 'ETIMEDOUT') {
    return new AiProviderError('timeout', 'The AI provider timed out', details);
  }
  if (THROTTLING.has(e.name) || status === 429)
    return new AiProviderError('rate-limited', 'The AI provider rate-limited the request', details);
  if (UNAVAILABLE.has(e.name) || (status !== undefined && status >= 500)) {
    return new AiProviderError(
      'unavailable',
      `The AI provider failed (${e.name}${status ? ` ${status}` : ''})`,
      details,
    );
  }
  if (e.code && CONNECTION_CODES.has(e.code))
    return new AiProviderError('unavailable', 'Could not reach the AI provider', details);
  if (status !== undefined && status >= 400)
    return new AiProviderError(
      'failed',
      `The AI provider refused the request (${status} ${e.name}): ${e.message}`,
      details,
    );
  return err;
}

const toUsage = (u: TokenUsage | undefined): Usage | undefined =>
  u && (u.inputTokens !== undefined || u.outputTokens !== undefined)
    ? {
        promptTokens: u.inputTokens ?? 0,
        completionTokens: u.outputTokens ?? 0,
        totalTokens: u.totalTokens ?? (u.inputTokens ?? 0) + (u.outputTokens ?? 0),
      }
    : undefined;

/**
 * The provider-neutral prompt (prompt.ts) in Converse's shape: system messages become `system`
 * blocks, the rest `messages`. Converse wants the turns to alternate and to open with the user,
 * so neighbouring turns of one role become one message of several text blocks (the layout is
 * kept: each stays its own block) and assistant turns before the first user turn are left out.
 */
export function converseRequest(messages: ModelMessage[]): { system: SystemContentBlock[]; messages: Message[] } {
  const system: SystemContentBlock[] = [];
  const turns: Message[] = [];
  for (const m of messages) {
    if (!m.content) continue; // Converse refuses empty text blocks
    if (m.role === 'system') {
      system.push({ text: m.content });
      continue;
    }
    if (turns.length === 0 && m.role === 'assistant') continue;
    const last = turns.at(-1);
    const block: ContentBlock = { text: m.content };
    if (last?.role === m.role) last.content!.push(block);
    else turns.push({ role: m.role, content: [block] });
  }
  return { system, messages: turns };
}

const titanResponse = z.object({ embedding: z.array(z.number()), inputTextTokenCount: z.optional(z.number()) });
const cohereResponse = z.object({ embeddings: z.array(z.array(z.number())) });

function parseModelOutput<T>(schema: z.ZodMiniType<T>, raw: unknown): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    throw new AiProviderError('failed', 'The embedding model answered in an unexpected shape', { cause: parsed.error });
  return parsed.data;
}

export function createBedrockProvider(settings: BedrockSettings): AiProvider {
  const client = traced(
    new BedrockRuntimeClient({
      region: settings.region,
      ...(settings.endpoint && { endpoint: settings.endpoint }),
      ...(settings.credentials && { credentials: settings.credentials }),
      maxAttempts: settings.maxRetries + 1,
      // HTTP/1.1 with keep-alive, like every other client here: the SDK's HTTP/2 default exists
      // for the bidirectional-stream operations, which this service does not use.
      requestHandler: new NodeHttpHandler({
        connectionTimeout: Math.min(settings.timeoutMs, 10_000),
        socketTimeout: settings.timeoutMs,
      }),
    }),
  );
  const spec = embeddingModelSpec(settings.embeddingModel, settings.embeddingDimensions);

  const request = (input: ChatInput) => ({
    modelId: settings.chatModel,
    ...converseRequest(modelMessages(input)),
    inferenceConfig: {
      maxTokens: input.maxTokens,
      // Converse takes 0–1; OpenAI's 0–2 is halved to keep its meaning (0 greedy, the middle the default-like).
      ...(input.temperature !== undefined && { temperature: Math.min(1, input.temperature / 2) }),
    },
  });

  async function invokeJson(body: unknown, signal: AbortSignal | undefined): Promise<unknown> {
    const out = await client.send(
      new InvokeModelCommand({
        modelId: settings.embeddingModel,
        contentType: 'application/json',
        accept: 'application/json',
        body: JSON.stringify(body),
      }),
      signal ? { abortSignal: signal } : {},
    );
    return JSON.parse(new TextDecoder().decode(out.body));
  }

  async function embedTitan(texts: string[], signal: AbortSignal | undefined): Promise<EmbeddingResult> {
    // The first failure stops the requests not yet sent (and cancels those in flight).
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    let tokens = 0;
    try {
      const vectors = await mapLimit(texts, settings.embeddingConcurrency, async (text) => {
        stop.signal.throwIfAborted();
        try {
          const raw = await invokeJson(
            { inputText: text.slice(0, spec.maxChars), dimensions: spec.dimensions, normalize: true },
            stop.signal,
          );
          const out = parseModelOutput(titanResponse, raw);
          tokens += out.inputTextTokenCount ?? estimateTokens(text);
          return Float32Array.from(out.embedding);
        } catch (err) {
          if (!stop.signal.aborted) stop.abort(err);
          throw err;
        }
      });
      return { vectors, tokens };
    } catch (err) {
      // Report the failure that stopped the batch, not an abort it caused.
      throw stop.signal.reason instanceof Error && !signal?.aborted ? stop.signal.reason : err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  async function embedCohere(texts: string[], signal: AbortSignal | undefined): Promise<EmbeddingResult> {
    const vectors: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += spec.textsPerRequest) {
      const batch = texts.slice(i, i + spec.textsPerRequest).map((t) => t.slice(0, spec.maxChars));
      const out = parseModelOutput(
        cohereResponse,
        await invokeJson({ texts: batch, input_type: 'search_document', truncate: 'END' }, signal),
      );
      if (out.embeddings.length !== batch.length)
        throw new AiProviderError(
          'failed',
          `The embedding model returned ${out.embeddings.length} vectors for ${batch.length} texts`,
        );
      for (const e of out.embeddings) vectors.push(Float32Array.from(e));
    }
    // Cohere reports no token count in the body: the same estimate the batching uses.
    return { vectors, tokens: texts.reduce((n, t) => n + estimateTokens(t), 0) };
  }

  return {
    name: 'bedrock',
    chatModel: settings.chatModel,
    embeddingModel: settings.embeddingModel,
    embeddingDimensions: spec.dimensions,
    embeddingLimits: {
      maxInputs:
        spec.family === 'cohere-v3'
          ? Math.min(spec.textsPerRequest, settings.embeddingBatchSize)
          : settings.embeddingBatchSize,
      maxTokens: settings.embeddingBatchMaxTokens,
    },

    async reply(input) {
      try {
        const out = await client.send(
          new ConverseCommand(request(input)),
          input.signal ? { abortSignal: input.signal } : {},
        );
        const text = (out.output?.message?.content ?? []).map((b) => b.text ?? '').join('');
        return { text, usage: toUsage(out.usage) ?? estimateUsage(input, text) };
      } catch (err) {
        throw classifyBedrockError(err);
      }
    },

    streamReply(input) {
      return streamedReply(input, settings.timeoutMs, {
        open: async (signal) =>
          (await client.send(new ConverseStreamCommand(request(input)), { abortSignal: signal })).stream ?? [],
        read: (event) => ({
          delta: event.contentBlockDelta?.delta?.text,
          finished: Boolean(event.messageStop),
          usage: toUsage(event.metadata?.usage),
        }),
        classify: classifyBedrockError,
      });
    },

    async embed(texts, options = {}): Promise<EmbeddingResult> {
      if (texts.length === 0) return { vectors: [], tokens: 0 };
      try {
        return spec.family === 'cohere-v3'
          ? await embedCohere(texts, options.signal)
          : await embedTitan(texts, options.signal);
      } catch (err) {
        throw classifyBedrockError(err);
      }
    },
  };
}
