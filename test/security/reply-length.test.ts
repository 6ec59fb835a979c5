import { eventually, kinds, useReplyTestApp } from '#test/helpers/chat-calls.ts';
import { until } from '#test/helpers/until.ts';

// A model that ignores the reply's length (REPLY_MAX_TOKENS): what it sends past what a reply of
// that many tokens could hold is not kept, streamed or whole, and a streamed model request is
// closed there; a reply never outgrows the table item it is stored in.

const REPLY_MAX_TOKENS = 64;
/** What a reply of REPLY_MAX_TOKENS may hold at most (16 characters a token). */
const MAX_CHARS = REPLY_MAX_TOKENS * 16;
const TWO_MB = 'word '.repeat(400_000);
const ONE_MB = 'x'.repeat(1_000_000);

const { app, newChat, stream, history } = useReplyTestApp('reply-length@example.com', {
  REPLY_MAX_TOKENS: String(REPLY_MAX_TOKENS),
});

test('a 2 MB stream against a 64-token reply: the reply ends complete at its length, stored as sent, the model request closed', async () => {
  const chat = await newChat();
  app.ai.setReply(TWO_MB);
  const sse = await stream(chat.id, 'Say a lot');

  const received = sse.deltas().join('');
  expect(received.length).toBeGreaterThan(MAX_CHARS - 'word '.length);
  expect(received.length).toBeLessThanOrEqual(MAX_CHARS);
  expect(TWO_MB.startsWith(received)).toBe(true);
  expect(kinds(sse).slice(-2)).toEqual(['event:usage', '[DONE]']);
  const stored = await eventually(
    () => history(chat.id),
    (m) => m.at(-1)?.status === 'complete',
  );
  expect(stored.at(-1).message).toBe(received);
  await until('the model request closed by the service', () => app.ai.requests.at(-1)?.clientClosedEarly);
});

test('a 1 MB whole reply against a 64-token reply: 200 with the reply cut at its length, stored as answered', async () => {
  const chat = await newChat();
  app.ai.setReply(ONE_MB);
  const res = await app.request('POST', '/message/logged-in', {
    token: app.token,
    body: { chatId: chat.id, prompt: 'Say a lot' },
  });

  expect(res.status).toBe(200);
  expect(res.body.data.response).toBe('x'.repeat(MAX_CHARS));
  expect((await history(chat.id)).at(-1).message).toBe(res.body.data.response);
});
