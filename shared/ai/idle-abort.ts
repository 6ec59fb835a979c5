// A streamed reply's abort signal: the caller's abort, or the stream going quiet for `idleMs`
// (the SDKs time out only until a response starts; a stream that then stops sending would be
// waited on for ever). `arm` restarts the quiet period at each event.

interface IdleAbort {
  signal: AbortSignal;
  /** Starts (again) the quiet period. */
  arm(): void;
  /** True when the stream was aborted for going quiet, not by the caller. */
  readonly idle: boolean;
  /** Stops the timer and forgets the caller's signal. */
  dispose(): void;
}

export function idleAbort(callerSignal: AbortSignal | undefined, idleMs: number): IdleAbort {
  const controller = new AbortController();
  let idle = false;
  let timer: NodeJS.Timeout | undefined;
  const onAbort = () => controller.abort();
  callerSignal?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    arm() {
      clearTimeout(timer);
      timer = setTimeout(() => {
        idle = true;
        controller.abort();
      }, idleMs);
    },
    get idle() {
      return idle;
    },
    dispose() {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onAbort);
    },
  };
}
