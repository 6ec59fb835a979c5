import { estimateMessageTokens } from '#shared/ai/tokens.ts';
import { useReplyTestApp } from '#test/helpers/chat-calls.ts';
import { lastUserMessage } from '#test/helpers/openai-server.ts';

// Whole (non-streamed) replies through the OpenAI provider, against the loopback
// OpenAI-compatible server: what the model is sent, what is stored, retries and timeouts.

const HISTORY_TOKEN_BUDGET = 300;

const { app, newChat, history } = useReplyTestApp('messages@example.com', {
  // Reached on purpose by the model that does not answer; long enough that no answering call does on a loaded machine.
  OPENAI_TIMEOUT_MS: '5000',
  OPENAI_MAX_RETRIES: '2',
  HISTORY_TOKEN_BUDGET: String(HISTORY_TOKEN_BUDGET),
});

const send = (chatId: string, prompt: string) =>
  app.request('POST', '/message/logged-in', { token: app.token, body: { chatId, prompt } });

test('the model gets the system message, the history and the prompt; the reply is stored with its usage', async () => {
  const chat = await newChat({ type: 'text', systemMessage: 'You are terse.' });
  app.ai.setReply((req) => `Echo: ${lastUserMessage(req)}`);

  const first = await send(chat.id, 'Hello');
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({ success: true, statusCode: 200, data: { response: 'Echo: Hello' } });
  const usage = first.body.data.usage;
  expect(usage.promptTokens).toBeGreaterThan(0);
  expect(usage.totalTokens).toBe(usage.promptTokens + usage.completionTokens);
  expect(first.body.data).not.toHaveProperty('sources');

  const second = await send(chat.id, 'How are you?');
  expect(second.body.data.response).toBe('Echo: How are you?');

  const sent = app.ai.chatRequests().at(-1)!;
  expect(sent.model).toBe('gpt-4o-mini');
  expect(sent.stream).toBeFalsy();
  expect(sent.messages).toEqual([
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Hello' },
    { role: 'assistant', content: 'Echo: Hello' },
    { role: 'user', content: 'How are you?' },
  ]);
  expect(app.ai.requests.at(-1)!.headers.authorization).toBe('Bearer test-key');

  const stored = await history(chat.id);
  expect(stored.map((m) => [m.sequenceNumber, m.messageType, m.type, m.message])).toEqual([
    [1, 'user', 'message', 'Hello'],
    [2, 'ai', 'message', 'Echo: Hello'],
    [3, 'user', 'message', 'How are you?'],
    [4, 'ai', 'message', 'Echo: How are you?'],
  ]);
  expect(stored[1].usage).toEqual(usage);
  expect(stored.every((m) => m.userId === app.user.id && m.chatId === chat.id)).toBe(true);
  expect(second.body.data).toMatchObject({ messageId: stored[3].id, sequenceNumber: 4 });
});

test('two concurrent prompts to one chat get distinct, consecutive sequence numbers', async () => {
  const chat = await newChat();
  app.ai.chunkDelayMs = 0;
  const [a, b, c] = await Promise.all([send(chat.id, 'first'), send(chat.id, 'second'), send(chat.id, 'third')]);
  expect([a.status, b.status, c.status]).toEqual([200, 200, 200]);
  // Each prompt follows the leaf active when it was counted, so the replies may be on different
  // branches: every message is on the branch through some reply, each reply under its own prompt.
  const branches = await Promise.all(
    [a, b, c].map(async (r) => {
      const { messageId, userMessageId } = r.body.data;
      const branch = (await app.request('GET', `/chat/${chat.id}/messages?leaf=${messageId}`, { token: app.token }))
        .body.data;
      expect(branch.find((m: any) => m.id === messageId)).toMatchObject({ parentId: userMessageId });
      return branch as any[];
    }),
  );
  const stored = [...new Map(branches.flat().map((m) => [m.id, m])).values()].sort(
    (x, y) => x.sequenceNumber - y.sequenceNumber,
  );
  expect(stored.map((m) => m.sequenceNumber)).toEqual([1, 2, 3, 4, 5, 6]);
  expect(
    stored
      .filter((m) => m.messageType === 'user')
      .map((m) => m.message)
      .sort(),
  ).toEqual(['first', 'second', 'third']);
  expect(new Set(stored.map((m) => m.id)).size).toBe(6);
});

test('the history is trimmed to the token budget, oldest messages dropped first', async () => {
  const chat = await newChat();
  app.ai.setReply(`ok ${'r'.repeat(150)}`);
  const prompts = ['a', 'b', 'c', 'd', 'e'].map((letter) => `${letter} ${'p'.repeat(150)}`);
  for (const prompt of prompts) expect((await send(chat.id, prompt)).status).toBe(200);

  const sent = app.ai.chatRequests().at(-1)!.messages;
  const historySent = sent.slice(1, -1); // between the system message and the prompt
  const stored = (await history(chat.id)).slice(0, -2); // all but the last prompt and its reply
  // What was sent is the newest end of the stored dialogue, in order...
  expect(historySent.length).toBeGreaterThan(0);
  expect(historySent.length).toBeLessThan(stored.length);
  expect(historySent.map((m) => m.content)).toEqual(stored.slice(-historySent.length).map((m) => m.message));
  // ...as much of it as the budget holds, and not one message more.
  const cost = (texts: string[]) => texts.reduce((n, t) => n + estimateMessageTokens(t), 0);
  expect(cost(historySent.map((m) => m.content))).toBeLessThanOrEqual(HISTORY_TOKEN_BUDGET);
  expect(cost(stored.slice(-historySent.length - 1).map((m) => m.message))).toBeGreaterThan(HISTORY_TOKEN_BUDGET);
  expect(sent.at(-1)).toEqual({ role: 'user', content: prompts[4] });
});

test('429 and 500 answers are retried with backoff until the reply comes', async () => {
  const chat = await newChat();
  app.ai.failNext(2, 429);
  const limited = await send(chat.id, 'after a rate limit');
  expect(limited.status).toBe(200);
  expect(limited.body.data.response).toBe('You said: after a rate limit');
  expect(app.ai.count('/v1/chat/completions')).toBe(3);

  app.ai.reset();
  app.ai.failNext(1, 500);
  const failed = await send(chat.id, 'after a server error');
  expect(failed.status).toBe(200);
  expect(app.ai.count('/v1/chat/completions')).toBe(2);
});

test('when the retries run out the caller gets 503 (rate limited) or 502, and the prompt stays stored unanswered', async () => {
  const chat = await newChat();
  app.ai.failNext(3, 429, { retryAfterSeconds: 0 });
  const limited = await send(chat.id, 'too busy');
  expect(limited.status).toBe(503);
  expect(limited.body).toMatchObject({ success: false, statusCode: 503 });
  expect(limited.headers.get('retry-after')).toBeTruthy();
  expect(app.ai.count('/v1/chat/completions')).toBe(3); // one try and OPENAI_MAX_RETRIES=2 retries

  app.ai.failNext(3, 500);
  const broken = await send(chat.id, 'broken');
  expect(broken.status).toBe(502);
  expect(broken.body.message).not.toMatch(/Injected/); // the provider's text is not echoed

  const stored = await history(chat.id);
  expect(stored.map((m) => [m.messageType, m.message])).toEqual([
    ['user', 'too busy'],
    ['user', 'broken'],
  ]);
});

test('a model that does not answer times out (OPENAI_TIMEOUT_MS) and the call is retried', async () => {
  const chat = await newChat();
  app.ai.stallNext(1);
  const res = await send(chat.id, 'are you there?');
  expect(res.status).toBe(200);
  expect(res.body.data.response).toBe('You said: are you there?');
  expect(app.ai.count('/v1/chat/completions')).toBe(2);
  expect(app.ai.requests[0]!.clientClosedEarly).toBe(true);
});
