// Server-Sent Events framing for streamed replies (DESIGN §7). Data is JSON, which never holds a
// raw line break, so every event's data fits one `data:` line.

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
} as const;

export const sseData = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
export const sseEvent = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
export const sseComment = (text: string) => `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
/** Always the last event of a stream. */
export const SSE_DONE = 'data: [DONE]\n\n';
