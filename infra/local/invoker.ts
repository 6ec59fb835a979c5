import type { Context } from 'aws-lambda';
import { createResponseStream, isStreamingHandler, lambdaContext, type StreamSink } from './lambda-runtime.ts';
import { asError } from '#shared/errors.ts';

// How the local gateway and pollers run a function: `invoke` hands it one event and resolves
// with what it returned (undefined for a streamed response, whose bytes went to the sink), or
// rejects with a FunctionFailure saying how it failed, as Lambda reports it to its caller.
// The runtime uses isolated instances (function-instances.ts); tests of the HTTP layer and the
// benchmark's baselines use handlers from their own process (inProcessInvoker).

export interface FunctionSpec {
  name: string;
  /** Entry file, relative to the project root (functions/<name>.ts). */
  entry: string;
  timeoutSeconds: number;
  memoryMb: number;
}

/** error: the handler threw or rejected; the others end the instance, as in Lambda. */
export type FailureKind = 'error' | 'timeout' | 'out-of-memory' | 'crash';

export class FunctionFailure extends Error {
  override name = 'FunctionFailure';
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly functionName: string,
  ) {
    super(message);
  }
}

export interface Invoker {
  /** Runs one invocation; a streaming handler writes to `sink` (HTTP routes pass one). */
  invoke(fn: FunctionSpec, event: unknown, sink?: StreamSink): Promise<unknown>;
  close(): Promise<void>;
}

export const timedOutMessage = (fn: FunctionSpec) => `Task timed out after ${fn.timeoutSeconds.toFixed(2)} seconds`;

/** Handlers loaded into this process (no isolation: a timeout cannot stop the handler, only stop waiting for it). */
export function inProcessInvoker(loadHandler: (entry: string) => Promise<unknown>): Invoker {
  return {
    async invoke(fn, event, sink) {
      const handler = await loadHandler(fn.entry);
      const context = lambdaContext(fn.name, fn.timeoutSeconds * 1000, fn.memoryMb);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new FunctionFailure('timeout', timedOutMessage(fn), fn.name)),
          fn.timeoutSeconds * 1000,
        );
      });
      try {
        if (isStreamingHandler(handler)) {
          if (!sink)
            throw new FunctionFailure('error', `${fn.name} streams its response; invoke it with a sink`, fn.name);
          const stream = createResponseStream(sink);
          stream.on('error', () => undefined); // a broken stream fails the handler's own pipeline
          const finished = new Promise((resolve) => stream.once('finish', resolve).once('close', resolve));
          await Promise.race([handler(event, stream, context), timeout]);
          // The runtime answers when the stream ends, not when the handler returns.
          await Promise.race([finished, timeout]);
          if (stream.errored) throw stream.errored;
          return undefined;
        }
        return await Promise.race([(handler as (e: unknown, c: Context) => Promise<unknown>)(event, context), timeout]);
      } catch (err) {
        if (err instanceof FunctionFailure) throw err;
        throw new FunctionFailure('error', asError(err).message, fn.name);
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {},
  };
}
