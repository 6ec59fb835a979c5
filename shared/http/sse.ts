import { Readable } from 'node:stream';
import { logger } from '../observability/logger.ts';
import { asError } from '../errors.ts';

// Server-Sent Events: the one writer of streamed responses. Data is JSON, which never
// holds a raw line break, so every event's data fits one `data:` line.

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
} as const;

/** An event on the wire: its id (`id: n`, for Last-Event-ID), named (`event: name`) or a bare `data:` line. */
export interface SseEvent {
  id?: number;
  event?: string;
  data: unknown;
}

/**
 * What a streaming route returns: the domain's stream of events, whose `open` is called once,
 * with the signal that fires when the client goes away; the events it yields are written as they
 * come, then `data: [DONE]`. Everything it does after the client left (storing a partial reply)
 * still runs to its end.
 */
export interface EventStream {
  source: { open(clientGone: AbortSignal): AsyncIterable<SseEvent> };
  /** A `: keep-alive` comment goes out when no event has for this long. */
  heartbeatMs: number;
}

const frame = ({ id, event, data }: SseEvent) =>
  `${id !== undefined ? `id: ${id}\n` : ''}${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
const comment = (text: string) => `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
/** Always the last event of a stream. */
const DONE = 'data: [DONE]\n\n';

/**
 * The body of a streamed response, and the promise of the source's last work (settles when the
 * source is exhausted, also after the client went away; the HTTP layer waits for it before the
 * invocation ends). Destroying the body (the client left) aborts the source's signal.
 */
export function writeEvents({ source, heartbeatMs }: EventStream): { body: Readable; finished: Promise<void> } {
  const clientGone = new AbortController();
  let open = true;
  let heartbeat: NodeJS.Timeout | undefined;
  const body = new Readable({
    read() {},
    destroy(err, callback) {
      open = false;
      clearTimeout(heartbeat);
      clientGone.abort();
      callback(err);
    },
  });
  const push = (text: string) => {
    if (!open) return;
    body.push(text);
    clearTimeout(heartbeat);
    heartbeat = setTimeout(() => push(comment('keep-alive')), heartbeatMs);
  };
  const run = async () => {
    for await (const event of source.open(clientGone.signal)) push(frame(event));
    push(DONE);
    clearTimeout(heartbeat);
    if (open) body.push(null);
  };
  const finished = run().catch((err: unknown) => {
    logger.error('stream failed', { error: asError(err) });
    clearTimeout(heartbeat);
    if (open) body.destroy(asError(err));
  });
  return { body, finished };
}
