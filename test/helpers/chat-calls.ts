import { useTestApp, type TestApp } from './app.ts';
import { postSse, type SseResult } from './sse.ts';
import { splitIntoDeltas } from './openai-server.ts';
import { until } from '#test/helpers/until.ts';

// The chat calls the reply tests make as one signed-in user: `who` is read at each call, so the
// app and token can be set in beforeAll. Chats are named unless the body says `name: undefined`,
// so a reply test sees no title call (a chat created without a name is titled from its first exchange).

export function chatCalls(who: () => { app: TestApp; token: string }) {
  const stream = (chatId: string, prompt: string, options: Parameters<typeof postSse>[3] = {}) => {
    const { app, token } = who();
    return postSse(`${app.url}/message/logged-in`, token, { chatId, prompt, stream: true }, options);
  };
  return {
    newChat: async (body: object = { type: 'text' }) => {
      const { app, token } = who();
      return (await app.request('POST', '/chat', { token, body: { name: 'Reply test', ...body } })).body.data;
    },
    stream,
    /** A streamed prompt whose client goes away once `deltas` deltas have come, before the stream ends. */
    leaveAfter: async (chatId: string, prompt: string, deltas: number) => {
      const sse = await stream(chatId, prompt, { stopWhen: afterDeltas(deltas) });
      expect(sse.stoppedEarly).toBe(true);
    },
    history: async (chatId: string) => {
      const { app, token } = who();
      return (await app.request('GET', `/chat/${chatId}/messages`, { token })).body.data as any[];
    },
  };
}

/**
 * The app a file of reply tests shares: the model's OpenAI stand-in (reset before each test), no
 * pollers (no file is ingested), `user` signed in (`app.token`); and the chat calls as that user.
 */
export function useReplyTestApp(user: string, env: Record<string, string> = {}) {
  const app = useTestApp({ model: 'openai', pollers: false, user, env });
  beforeEach(() => app.ai.reset());
  return { app, ...chatCalls(() => ({ app, token: app.token })) };
}

/** A stream's events by kind: `event:<name>`, `delta` or `[DONE]`. */
export const kinds = (sse: SseResult) =>
  sse.events.map((e) => (e.event ? `event:${e.event}` : e.data === '[DONE]' ? '[DONE]' : 'delta'));

/**
 * A whole streamed reply of `reply` as every provider's stream must look on the wire: a 200 event
 * stream of its deltas in order, then the usage event and [DONE]. The usage event's data.
 */
export function expectStreamedReply(sse: SseResult, reply: string) {
  expect(sse.status).toBe(200);
  expect(sse.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
  expect(sse.deltas()).toEqual(splitIntoDeltas(reply));
  expect(kinds(sse).slice(-2)).toEqual(['event:usage', '[DONE]']);
  return sse.named('usage')[0];
}

/** A stream's `stopWhen` that leaves once `n` deltas (JSON data events) have come. */
export const afterDeltas = (n: number) => (events: SseResult['events']) =>
  events.filter((e) => !e.event && e.data.startsWith('{')).length >= n;

/** Reads until `ok`: what a reply stored after its stream ended. */
export const eventually = <T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> =>
  until('a stored reply', read, ok);
