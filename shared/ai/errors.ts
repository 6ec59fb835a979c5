// Failures of an AI provider call, classified once so callers can answer with the right status
// (shared/http/errors.ts: timeout → 504, rate-limited → 503, anything else → 502) or the right
// stream error event.

type AiFailureKind = 'timeout' | 'rate-limited' | 'unavailable' | 'failed';

export class AiProviderError extends Error {
  override name = 'AiProviderError';
  constructor(
    readonly kind: AiFailureKind,
    message: string,
    readonly details: { status?: number; retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(message);
  }
}

/** The message shown to a client for a failure (never the provider's raw text). */
export function clientMessage(err: AiProviderError): string {
  switch (err.kind) {
    case 'timeout':
      return 'The AI provider did not answer in time';
    case 'rate-limited':
      return 'The AI provider is busy (rate limited); try again shortly';
    case 'unavailable':
      return 'The AI provider is unavailable';
    default:
      return 'The AI provider failed to answer';
  }
}
