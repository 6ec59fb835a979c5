// Waiting for an event a test cannot subscribe to (a log line, a record written after a
// response, a socket closed on the far side): polled, with no bound short enough for a loaded
// machine to reach. A minute without the event fails with what was awaited.

const POLL_MS = 20;
const GIVE_UP_MS = 60_000;

/** Resolves with the first value `read` gives that `ok` accepts; throws naming `what` after a minute. */
export async function until<T>(
  what: string,
  read: () => T | Promise<T>,
  ok: (value: T) => boolean = Boolean,
): Promise<T> {
  const giveUpAt = Date.now() + GIVE_UP_MS;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > giveUpAt) throw new Error(`Still waiting after ${GIVE_UP_MS / 1000} s for ${what}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
