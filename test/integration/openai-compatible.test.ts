import OpenAI from 'openai';
import { refusal } from '#test/helpers/openai-client.ts';
import { type TestApp, useTestApp } from '#test/helpers/app.ts';
import { ingestedFile } from '#test/helpers/files.ts';
import { knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';
import { splitIntoDeltas } from '#test/helpers/openai-server.ts';
import { UsageCounters } from '#shared/limits/usage-counters.ts';
import { tokenCounter, utcDay } from '#shared/limits/user-limits.ts';

// The OpenAI-compatible API driven by the official `openai` client with an API key as its key:
// the model list, whole and streamed completions (the usage chunk), citations from a file, the
// token limits, multi-turn messages, and errors in OpenAI's shape. The model behind it is the
// loopback OpenAI-compatible server (the service's own provider).

let openai: OpenAI;
let fileId: string;
let collectionId: string;
const REPLY_MAX_TOKENS = 400;
// Limits on (high enough for this suite's own requests): the 429 test spends them for one user.
const MESSAGES_PER_MINUTE = 1_000;
const DAILY_TOKEN_BUDGET = 10_000_000;

const app = useTestApp(
  async () => ({
    model: 'openai',
    pdfs: { '/animals.pdf': { body: Buffer.from(await makeTextPdf(3, 8)) } },
    user: 'programs@example.com',
    env: {
      REPLY_MAX_TOKENS: String(REPLY_MAX_TOKENS),
      RATE_LIMIT_MESSAGES_PER_MINUTE: String(MESSAGES_PER_MINUTE),
      DAILY_TOKEN_BUDGET: String(DAILY_TOKEN_BUDGET),
    },
  }),
  { ready: animalsInACollection },
);

/** The animals PDF ingested into a collection; an API key's client. */
async function animalsInACollection(app: TestApp) {
  const { token } = app;
  collectionId = (await app.request('POST', '/collections', { token, body: { name: 'Zoo' } })).body.data.id;
  fileId = await ingestedFile(app, token, '/animals.pdf', { collectionId });
  const key = (await app.request('POST', '/me/api-keys', { token, body: { name: 'sdk' } })).body.data.key;
  openai = new OpenAI({ apiKey: key, baseURL: `${app.url}/openai`, maxRetries: 0 });
}
beforeEach(() => app.ai.reset());

/** The usage the loopback server reports for a request and its reply (its own formula). */
const serverUsage = (messages: { content: string }[], reply: string) => {
  const prompt = messages.reduce((n, m) => n + Math.max(1, Math.ceil(m.content.length / 4)) + 3, 0);
  const completion = splitIntoDeltas(reply).length;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
};

test('models.list names chat, library, the collection and the completed file', async () => {
  const models = await openai.models.list();
  expect(models.data.map((m) => m.id)).toEqual(['chat', 'library', `collection:${collectionId}`, `file:${fileId}`]);
  expect(models.data[2]).toEqual({
    id: `collection:${collectionId}`,
    object: 'model',
    created: expect.any(Number),
    owned_by: expect.any(String),
  });
});

test('a whole completion is a chat.completion, from the whole multi-turn conversation, with usage', async () => {
  app.ai.setReply('Blue, as before.');
  const completion = await openai.chat.completions.create({
    model: 'chat',
    messages: [
      { role: 'system', content: 'Answer briefly.' },
      { role: 'user', content: 'What colour is the sky?' },
      { role: 'assistant', content: 'Blue.' },
      { role: 'user', content: [{ type: 'text', text: 'And at noon?' }] },
    ],
    temperature: 0.2,
  });
  expect(completion).toEqual({
    id: expect.stringMatching(/^chatcmpl-/),
    object: 'chat.completion',
    created: expect.any(Number),
    model: 'chat',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'Blue, as before.', refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: expect.any(Object),
    citations: [],
  });
  const sent = app.ai.chatRequests()[0]!;
  expect(sent.messages).toEqual([
    { role: 'system', content: 'Answer briefly.' },
    { role: 'user', content: 'What colour is the sky?' },
    { role: 'assistant', content: 'Blue.' },
    { role: 'user', content: 'And at noon?' },
  ]);
  expect(sent.temperature).toBe(0.2);
  expect(sent.max_completion_tokens).toBe(REPLY_MAX_TOKENS);
  expect(completion.usage).toEqual(serverUsage(sent.messages, 'Blue, as before.'));
});

test('a streamed completion sends chunks, the finish reason, then the usage chunk with no choices', async () => {
  app.ai.setReply('One two three four');
  const stream = await openai.chat.completions.create({
    model: 'chat',
    messages: [{ role: 'user', content: 'Count' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0]!.id)).toBe(true);
  expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
  const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
  expect(text).toBe('One two three four');
  expect(chunks.length).toBeGreaterThan(4); // one chunk per model delta, not the reply in one piece
  const [finish, last] = chunks.slice(-2);
  expect(finish!.choices).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]);
  expect(last!.choices).toEqual([]);
  expect(last!.usage).toEqual(serverUsage(app.ai.chatRequests()[0]!.messages, 'One two three four'));
  expect((last as unknown as { citations: unknown[] }).citations).toEqual([]);
  // Without include_usage no chunk carries usage, and the finish chunk is the last.
  const plain = await openai.chat.completions.create({
    model: 'chat',
    messages: [{ role: 'user', content: 'Hi' }],
    stream: true,
  });
  const plainChunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of plain) plainChunks.push(chunk);
  expect(plainChunks.some((c) => 'usage' in c)).toBe(false);
  expect(plainChunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
});

test('file:<id> answers from the file with citations, whole and streamed; [n] is citation n', async () => {
  const sentence = knownSentence(2, 3);
  app.ai.setReply('The folio says so [1], see also [9].');
  const completion = await openai.chat.completions.create({
    model: `file:${fileId}`,
    messages: [{ role: 'user', content: sentence }],
  });
  expect(completion.choices[0]!.message.content).toBe('The folio says so [1], see also .');
  const { citations } = completion as unknown as { citations: Record<string, unknown>[] };
  expect(citations.length).toBeGreaterThan(0);
  expect(citations[0]).toEqual({
    index: 1,
    fileId,
    fileName: 'animals.pdf',
    page: 2,
    part: 2,
    location: { type: 'page', page: 2 },
    quote: expect.any(String),
    verified: true,
    cited: true,
  });
  expect(citations.map((c) => c.index)).toEqual(citations.map((_, i) => i + 1));
  expect(app.ai.chatRequests().at(-1)!.messages.at(-1)!.content).toContain(
    '<passage n="1" source="animals.pdf, page 2">',
  );

  app.ai.setReply('Page two [1].');
  const stream = await openai.chat.completions.create({
    model: `collection:${collectionId}`,
    messages: [{ role: 'user', content: sentence }],
    stream: true,
  });
  const chunks: OpenAI.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Page two [1].');
  const last = chunks.at(-1) as unknown as { citations: Record<string, unknown>[] };
  expect(last.citations[0]).toMatchObject({ index: 1, fileId, page: 2, verified: true, cited: true });
  expect(chunks.slice(0, -1).some((c) => 'citations' in c)).toBe(false);
});

test('max_tokens and max_completion_tokens are honoured within REPLY_MAX_TOKENS; a cut reply finishes with length', async () => {
  app.ai.setReply('one two three four five six');
  const short = await openai.chat.completions.create({
    model: 'chat',
    messages: [{ role: 'user', content: 'Go on' }],
    max_tokens: 3,
  });
  expect(app.ai.chatRequests().at(-1)!.max_completion_tokens).toBe(3);
  expect(short.choices[0]!.finish_reason).toBe('length');
  await openai.chat.completions.create({
    model: 'chat',
    messages: [{ role: 'user', content: 'Go on' }],
    max_completion_tokens: 1_000_000,
  });
  expect(app.ai.chatRequests().at(-1)!.max_completion_tokens).toBe(REPLY_MAX_TOKENS);
});

test("another user's file or collection, and unknown models, are 404 model_not_found in OpenAI's shape", async () => {
  const other = await app.signIn('other@example.com');
  const otherKey = (await app.request('POST', '/me/api-keys', { token: other.token, body: { name: 'x' } })).body.data
    .key;
  const stranger = new OpenAI({ apiKey: otherKey, baseURL: `${app.url}/openai`, maxRetries: 0 });
  for (const model of [`file:${fileId}`, `collection:${collectionId}`, 'gpt-4o', 'file:nope']) {
    const { status, error } = await refusal(
      stranger.chat.completions.create({ model, messages: [{ role: 'user', content: knownSentence(2, 3) }] }),
    );
    expect(status).toBe(404);
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 'model_not_found', param: null });
  }
  expect((await stranger.models.list()).data.map((m) => m.id)).toEqual(['chat', 'library']);
  expect(app.ai.count('/v1/chat/completions')).toBe(0);
});

test("bad requests are 400 invalid_request_error in OpenAI's shape, naming the parameter", async () => {
  const ending = await refusal(
    openai.chat.completions.create({ model: 'chat', messages: [{ role: 'assistant', content: 'Hi' }] }),
  );
  expect(ending.status).toBe(400);
  expect(ending.error).toMatchObject({ type: 'invalid_request_error', param: 'messages' });
  const several = await refusal(
    openai.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'Hi' }], n: 2 }),
  );
  expect(several.status).toBe(400);
  expect(several.error).toMatchObject({ type: 'invalid_request_error', param: 'n' });
  const empty = await refusal(openai.chat.completions.create({ model: 'chat', messages: [] }));
  expect(empty.error).toMatchObject({ param: 'messages', code: 'validation_failed' });
  expect(app.ai.count('/v1/chat/completions')).toBe(0);
});

test("the key's user's rate limit and token budget answer 429 in OpenAI's shape", async () => {
  const busy = await app.signIn('busy@example.com');
  const key = (await app.request('POST', '/me/api-keys', { token: busy.token, body: { name: 'busy' } })).body.data.key;
  const client = new OpenAI({ apiKey: key, baseURL: `${app.url}/openai`, maxRetries: 0 });
  const ask = () => client.chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'Hi' }] });
  // The user has spent the day's budget (today's and, should the day turn, tomorrow's counter).
  const counters = new UsageCounters(app.clients().db, app.tableName);
  for (const day of [utcDay(Date.now()), utcDay(Date.now() + 86_400_000)])
    await counters.add({ subject: busy.user.id, counter: tokenCounter(day) }, DAILY_TOKEN_BUDGET);
  const budget = await refusal(ask());
  expect(budget.status).toBe(429);
  expect(budget.error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' });
  // The minute's requests are used up (this minute's and the next one's window, whichever the request lands in).
  const minute = Math.floor(Date.now() / 60_000);
  for (const window of [minute, minute + 1])
    await counters.add({ subject: busy.user.id, counter: `RATE#messages#${window}` }, MESSAGES_PER_MINUTE);
  const rate = await refusal(ask());
  expect(rate.status).toBe(429);
  expect(rate.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
  expect(app.ai.count('/v1/chat/completions')).toBe(0);
});

test('chunks reach the client while the model is still generating; a failure mid-stream is raised by the client', async () => {
  app.ai.setReply('alpha beta gamma delta');
  const release = app.ai.holdStreamAfter(2);
  const stream = await openai.chat.completions.create({
    model: 'chat',
    messages: [{ role: 'user', content: 'Go' }],
    stream: true,
  });
  let text = '';
  for await (const chunk of stream) {
    text += chunk.choices[0]?.delta.content ?? '';
    // The model holds after two deltas until released: they arrived before the reply ended.
    if (text === 'alpha beta ') release();
  }
  expect(text).toBe('alpha beta gamma delta');

  app.ai.cutStreamAfter(2);
  const cut = await openai.chat.completions.create({
    model: 'chat',
    messages: [{ role: 'user', content: 'Go' }],
    stream: true,
  });
  const seen: string[] = [];
  const failed = await (async () => {
    for await (const chunk of cut) seen.push(chunk.choices[0]?.delta.content ?? '');
  })().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(failed).toBeInstanceOf(OpenAI.APIError);
  expect((failed as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ type: 'server_error' });
  expect(seen.join('')).toBe('alpha beta ');
});
