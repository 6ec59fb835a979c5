import { metrics as serviceMetrics, type ServiceMetrics } from '../observability/metrics.ts';
import type { AiProvider, ChatInput, StreamPart } from './types.ts';

// A provider whose replies are measured (shared/observability/metrics.ts): tokens, the model's latency and,
// streamed, the time to the first text. Around the provider rather than in the reply logic, so
// every provider and every caller is measured the same way. A reply that fails or is cut off
// records nothing.

export function withReplyMetrics(provider: AiProvider, metrics: ServiceMetrics = serviceMetrics): AiProvider {
  return {
    name: provider.name,
    chatModel: provider.chatModel,
    embeddingModel: provider.embeddingModel,
    embeddingDimensions: provider.embeddingDimensions,
    embeddingLimits: provider.embeddingLimits,
    embed: (texts, options) => provider.embed(texts, options),
    async reply(input: ChatInput) {
      const started = performance.now();
      const result = await provider.reply(input);
      metrics.reply({ tokens: result.usage.totalTokens, latencyMs: performance.now() - started });
      return result;
    },
    async *streamReply(input: ChatInput): AsyncIterable<StreamPart> {
      const started = performance.now();
      let firstTokenMs: number | undefined;
      let tokens: number | undefined;
      for await (const part of provider.streamReply(input)) {
        if (part.type === 'delta' && firstTokenMs === undefined) firstTokenMs = performance.now() - started;
        if (part.type === 'usage') tokens = part.usage.totalTokens;
        yield part;
      }
      metrics.reply({
        tokens: tokens ?? 0,
        latencyMs: performance.now() - started,
        ...(firstTokenMs !== undefined && { firstTokenMs }),
      });
    },
  };
}
