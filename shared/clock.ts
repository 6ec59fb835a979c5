// The time, passed in wherever the domain stamps or compares it: one convention (a function
// returning the current Date), composed once per function, and settable by tests.

export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

/** The clock's time as stored in items: ISO 8601, UTC. */
export const isoNow = (clock: Clock): string => clock().toISOString();

/** Waits `ms`, or less when `signal` aborts first (resolves either way). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
