import type { TestApp } from './app.ts';
import { postSse, type SseResult } from './sse.ts';
import { until } from '#test/helpers/until.ts';

// The chat calls the reply tests make as one signed-in user: `who` is read at each call, so the
// app and token can be set in beforeAll. Chats are named unless the body says `name: undefined`,
// so a reply test sees no title call (a chat created without a name is titled from its first exchange).

export function chatCalls(who: () => { app: TestApp; token: string }) {
  return {
    newChat: async (body: object = { type: 'text' }) => {
      const { app, token } = who();
      return (await app.request('POST', '/chat', { token, body: { name: 'Reply test', ...body } })).body.data;
    },
    stream: (chatId: string, prompt: string, options: Parameters<typeof postSse>[3] = {}) => {
      const { app, token } = who();
      return postSse(`${app.url}/message/logged-in`, token, { chatId, prompt, stream: true }, options);
    },
    history: async (chatId: string) => {
      const { app, token } = who();
      return (await app.request('GET', `/chat/${chatId}/messages`, { token })).body.data as any[];
    },
  };
}

/** A stream's events by kind: `event:<name>`, `delta` or `[DONE]`. */
export const kinds = (sse: SseResult) =>
  sse.events.map((e) => (e.event ? `event:${e.event}` : e.data === '[DONE]' ? '[DONE]' : 'delta'));

/** Reads until `ok`: what a reply stored after its stream ended. */
export const eventually = <T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> =>
  until('a stored reply', read, ok);
