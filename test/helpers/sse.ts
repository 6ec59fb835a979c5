import { createParser, type EventSourceMessage } from 'eventsource-parser';

// Reads a Server-Sent Events response with a real SSE parser (eventsource-parser), keeping
// each event's arrival time, the comments (heartbeats) and the raw text.
//
//   const res = await fetch(url, { method: 'POST', headers, body });
//   const sse = await readSse(res);
//   sse.events            // [{ event?: 'sources'|'usage'|'error', data: '...', at }]
//   sse.deltas()          // the `content` of each default event with JSON data
//   sse.firstDataAt       // ms timestamp of the first `data:` event
//
// `stopWhen` ends the reading early (the client goes away): the body is cancelled, which
// closes the connection. `onChunk` sees the events as they arrive (to act mid-stream).

export interface SseEvent extends EventSourceMessage {
  /** Date.now() when the event was parsed. */
  at: number;
}

export interface SseResult {
  status: number;
  headers: Headers;
  events: SseEvent[];
  comments: string[];
  raw: string;
  /** Date.now() when the response headers arrived. */
  startedAt: number;
  /** Date.now() when the first event with data arrived. */
  firstDataAt?: number;
  endedAt: number;
  /** True when reading stopped because `stopWhen` said so. */
  stoppedEarly: boolean;
  /** The `content` of each unnamed event with JSON data, in order. */
  deltas(): string[];
  /** Events of one name (e.g. 'usage'), their data parsed as JSON. */
  named(name: string): any[];
  /** The last event's data. */
  last(): string | undefined;
}

export interface ReadSseOptions {
  /** Stop reading (cancel the body, closing the connection) once this returns true. */
  stopWhen?: (events: SseEvent[]) => boolean;
  /** Called after each chunk of bytes is parsed, with everything so far. */
  onChunk?: (events: SseEvent[], comments: string[]) => void;
}

export async function readSse(response: Response, options: ReadSseOptions = {}): Promise<SseResult> {
  const startedAt = Date.now();
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let firstDataAt: number | undefined;
  let raw = '';
  let stoppedEarly = false;
  const parser = createParser({
    onEvent: (e) => {
      const at = Date.now();
      events.push({ ...e, at });
      if (firstDataAt === undefined && e.data !== '') firstDataAt = at;
    },
    onComment: (c) => comments.push(c),
  });
  if (!response.body) throw new Error('The response has no body');
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const text = decoder.decode(value, { stream: true });
      raw += text;
      parser.feed(text);
      options.onChunk?.(events, comments);
      if (options.stopWhen?.(events)) {
        stoppedEarly = true;
        await reader.cancel();
        break;
      }
    }
  } catch (err) {
    // A connection cut by the server ends the reading; what arrived is returned.
    if (!(err instanceof TypeError) && (err as Error).name !== 'AbortError') throw err;
  }
  const result: SseResult = {
    status: response.status,
    headers: response.headers,
    events,
    comments,
    raw,
    startedAt,
    endedAt: Date.now(),
    stoppedEarly,
    ...(firstDataAt !== undefined && { firstDataAt }),
    deltas: () =>
      events
        .filter((e) => e.event === undefined && e.data.startsWith('{'))
        .map((e) => (JSON.parse(e.data) as { content: string }).content),
    named: (name) => events.filter((e) => e.event === name).map((e) => JSON.parse(e.data)),
    last: () => events.at(-1)?.data,
  };
  return result;
}

/** POSTs JSON with a bearer token and reads the event stream. */
export async function postSse(
  url: string,
  token: string,
  body: unknown,
  options: ReadSseOptions & { signal?: AbortSignal } = {},
): Promise<SseResult> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'text/event-stream',
      connection: 'close', // as app.request: no kept-alive connection to be closed under it
    },
    body: JSON.stringify(body),
    ...(options.signal && { signal: options.signal }),
  });
  return readSse(response, options);
}
