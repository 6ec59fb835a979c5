import { splitIntoDeltas } from '#test/helpers/openai-server.ts';
import { eventually, expectStreamedReply, kinds, useReplyTestApp } from '#test/helpers/chat-calls.ts';
import { storedMessages } from '#test/helpers/stored-messages.ts';

// Streamed replies (stream: true) through the local gateway's Lambda response streaming,
// against the loopback OpenAI-compatible server, read with a real SSE parser.

const { app, newChat, stream, leaveAfter, history } = useReplyTestApp('streaming@example.com', {
  // Reached on purpose by the model that goes quiet; long enough that no answering call does on a loaded machine.
  OPENAI_TIMEOUT_MS: '5000',
  OPENAI_MAX_RETRIES: '2',
  STREAM_HEARTBEAT_MS: '150',
});

const REPLY = 'The quick brown fox jumps over the lazy dog, twice.';

test('streams one event per delta in order, then usage, then [DONE] and a blank line; the reply is stored', async () => {
  const chat = await newChat();
  app.ai.setReply(REPLY);
  const sse = await stream(chat.id, 'Tell me about the fox');

  const usage = expectStreamedReply(sse, REPLY);
  expect(sse.headers.get('cache-control')).toBe('no-cache');
  expect(sse.headers.get('x-accel-buffering')).toBe('no');
  expect(sse.raw.endsWith('data: [DONE]\n\n')).toBe(true);
  expect(usage).toEqual({
    promptTokens: expect.any(Number),
    completionTokens: splitIntoDeltas(REPLY).length,
    totalTokens: expect.any(Number),
  });

  const sent = app.ai.chatRequests()[0]!;
  expect(sent.stream).toBe(true);
  expect(sent.stream_options).toEqual({ include_usage: true });

  const stored = await history(chat.id);
  expect(stored.map((m) => [m.sequenceNumber, m.messageType, m.message])).toEqual([
    [1, 'user', 'Tell me about the fox'],
    [2, 'ai', REPLY],
  ]);
  expect(stored[1].usage).toEqual(usage);
  expect(stored[1]).not.toHaveProperty('incomplete');
});

test('bytes really stream: the first deltas arrive while the model is still generating', async () => {
  const chat = await newChat();
  app.ai.setReply(REPLY);
  const release = app.ai.holdStreamAfter(2); // the model sends two deltas, then waits
  let releasedByClient = false;
  const safety = setTimeout(release, 50_000); // never hang the suite (the test fails first: releasedByClient)
  const sse = await stream(chat.id, 'go', {
    onChunk: (events) => {
      if (!releasedByClient && events.filter((e) => !e.event && e.data.startsWith('{')).length >= 2) {
        releasedByClient = true; // two deltas reached the client before the model could finish
        release();
      }
    },
  });
  clearTimeout(safety);
  expect(releasedByClient).toBe(true);
  expect(sse.firstDataAt).toBeDefined();
  expect(sse.deltas().join('')).toBe(REPLY);
  expect(sse.last()).toBe('[DONE]');
});

test('a quiet model gets a keep-alive comment (STREAM_HEARTBEAT_MS)', async () => {
  const chat = await newChat();
  app.ai.setReply(REPLY);
  const release = app.ai.holdStreamAfter(1);
  const safety = setTimeout(release, 50_000);
  const sse = await stream(chat.id, 'slowly', {
    onChunk: (_events, comments) => {
      if (comments.length) release();
    },
  });
  clearTimeout(safety);
  expect(sse.comments).toContain('keep-alive');
  expect(sse.raw).toMatch(/\n\n: keep-alive\n\n/);
  expect(sse.deltas().join('')).toBe(REPLY);
  expect(sse.last()).toBe('[DONE]');
});

test('a stream cut upstream ends with event: error then [DONE]; the partial reply is stored as incomplete', async () => {
  const chat = await newChat();
  app.ai.setReply(REPLY);
  app.ai.cutStreamAfter(3);
  const sse = await stream(chat.id, 'cut me off');
  expect(sse.status).toBe(200);
  expect(sse.deltas()).toEqual(splitIntoDeltas(REPLY).slice(0, 3));
  expect(kinds(sse).slice(-2)).toEqual(['event:error', '[DONE]']);
  expect(sse.named('error')[0]).toEqual({ message: expect.stringMatching(/AI provider/) });
  expect(sse.named('usage')).toEqual([]);
  expect(sse.raw.endsWith('data: [DONE]\n\n')).toBe(true);

  const stored = await history(chat.id);
  expect(stored[1]).toMatchObject({ messageType: 'ai', message: sse.deltas().join(''), incomplete: true });
});

test('a stream that goes quiet mid-way times out with event: error then [DONE]', async () => {
  const chat = await newChat();
  app.ai.setReply(REPLY);
  app.ai.stallStreamAfter(2);
  const sse = await stream(chat.id, 'stall');
  expect(sse.deltas()).toHaveLength(2);
  expect(sse.named('error')[0].message).toMatch(/did not answer in time/);
  expect(sse.last()).toBe('[DONE]');
  expect(sse.comments).toContain('keep-alive'); // the client kept hearing from us meanwhile
});

test('429 and 500 before the stream starts are retried; exhausted retries end in event: error', async () => {
  const chat = await newChat();
  app.ai.setReply(REPLY);
  app.ai.failNext(1, 429);
  app.ai.failNext(1, 500);
  const ok = await stream(chat.id, 'retry me');
  expect(ok.deltas().join('')).toBe(REPLY);
  expect(app.ai.count('/v1/chat/completions')).toBe(3);

  app.ai.failNext(3, 500, { retryAfterSeconds: 0 });
  const failed = await stream(chat.id, 'fail me');
  expect(failed.status).toBe(200);
  expect(kinds(failed)).toEqual(['event:start', 'event:error', '[DONE]']);
  // The failed reply is stored as failed, with nothing generated.
  const stored = await history(chat.id);
  expect(stored.map((m) => [m.messageType, m.status, m.message])).toEqual([
    ['user', undefined, 'retry me'],
    ['ai', 'complete', REPLY],
    ['user', undefined, 'fail me'],
    ['ai', 'failed', ''],
  ]);
});

test('when the client goes away the generation goes on to its end and the whole reply is stored', async () => {
  const chat = await newChat();
  app.ai.setReply(REPLY);
  const release = app.ai.holdStreamAfter(2);
  await leaveAfter(chat.id, 'I will leave', 2);
  release();
  const stored = await eventually(
    () => history(chat.id),
    (m) => m[1]?.status === 'complete',
  );
  expect(stored[1]).toMatchObject({ messageType: 'ai', message: REPLY, status: 'complete' });
  expect(stored[1]).not.toHaveProperty('incomplete');
  expect(app.ai.requests.at(-1)!.clientClosedEarly).toBe(false); // the model call was never aborted
});

test('concurrent streamed prompts to one chat get distinct sequence numbers', async () => {
  const chat = await newChat();
  const results = await Promise.all(['one', 'two', 'three'].map((p) => stream(chat.id, p)));
  expect(results.every((r) => r.last() === '[DONE]')).toBe(true);
  // Every branch: prompts sent at once may answer on different branches.
  const stored = await storedMessages(app, chat.id);
  expect(stored.map((m) => m.sequenceNumber)).toEqual([1, 2, 3, 4, 5, 6]);
  // Each reply answers its own prompt.
  for (const r of results) expect(stored.map((m) => m.message)).toContain(r.deltas().join(''));
});

test('errors before the stream starts are ordinary JSON envelopes', async () => {
  const res = await app.request('POST', '/message/logged-in', {
    token: app.token,
    body: { chatId: 'zzzzzzzzzzzzzzzzzzzzzzzz', prompt: 'hi', stream: true },
  });
  expect(res.status).toBe(404);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  expect(res.body).toMatchObject({ success: false, statusCode: 404 });
  expect(app.ai.count()).toBe(0);
});
