import { AiProviderError } from './errors.ts';
import { idleAbort } from './idle-abort.ts';
import { estimateUsage } from './prompt.ts';
import type { ChatInput, StreamPart, Usage } from './types.ts';

// A provider's streamed reply, read the same way whatever the provider: its events under an
// idle abort (a stream that goes quiet for the provider's timeout fails as `timeout`), the
// caller's abort ending it quietly, and a stream that breaks or ends before the reply finished
// failing as `unavailable`. Each provider says how to open its stream and read one event.

/** What one event of a provider's stream holds for the reply. */
export interface StreamEvent {
  delta?: string | null | undefined;
  /** The provider said the reply is finished (its stop or finish reason). */
  finished?: boolean;
  usage?: Usage | undefined;
}

export interface StreamSource<Event> {
  open(signal: AbortSignal): Promise<AsyncIterable<Event> | Iterable<Event>>;
  read(event: Event): StreamEvent;
  /** The provider's error as the service's (AiProviderError), or as it is when it must stay as it is. */
  classify(err: unknown): unknown;
  /** A classified error that is thrown as it is rather than as a broken connection (besides AiProviderError). */
  keeps?(classified: unknown): boolean;
}

/** The reply's deltas as they come, then its usage (the provider's, or an estimate when it gave none). */
export async function* streamedReply<Event>(
  input: ChatInput,
  idleMs: number,
  source: StreamSource<Event>,
): AsyncGenerator<StreamPart> {
  const abort = idleAbort(input.signal, idleMs);
  let text = '';
  let usage: Usage | undefined;
  let finished = false;
  try {
    const stream = await source.open(abort.signal);
    abort.arm();
    for await (const event of stream) {
      abort.arm();
      const read = source.read(event);
      if (read.delta) {
        text += read.delta;
        yield { type: 'delta', text: read.delta };
      }
      if (read.finished) finished = true;
      usage = read.usage ?? usage;
    }
  } catch (err) {
    if (abort.idle) throw new AiProviderError('timeout', 'The AI provider stopped sending', { cause: err });
    if (input.signal?.aborted) return;
    const classified = source.classify(err);
    // Anything else mid-stream (a cut connection, a bad frame or chunk) is the provider's failure.
    throw classified instanceof AiProviderError || source.keeps?.(classified)
      ? classified
      : new AiProviderError('unavailable', 'The connection to the AI provider broke', { cause: err });
  } finally {
    abort.dispose();
  }
  // An SDK may end the iteration quietly on an abort; tell ours from the caller's.
  if (abort.idle) throw new AiProviderError('timeout', 'The AI provider stopped sending');
  if (input.signal?.aborted) return;
  if (!finished) throw new AiProviderError('unavailable', 'The AI provider ended the reply before finishing it');
  yield { type: 'usage', usage: usage ?? estimateUsage(input, text) };
}
