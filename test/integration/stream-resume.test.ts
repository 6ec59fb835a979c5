import { eventually, useReplyTestApp } from '#test/helpers/chat-calls.ts';
import { readSse, type ReadSseOptions, type SseEvent, type SseResult } from '#test/helpers/sse.ts';
import { until } from '#test/helpers/until.ts';

// Replies that outlive their connection, through the local gateway against the loopback OpenAI
// server streaming slowly: every event has an id; a cut stream resumed with Last-Event-ID (or
// ?after) joins the first part into exactly the uncut run; a stop from another connection ends
// the generation and every stream of it; the stored reply reads as it grows; a generator whose
// instance is killed leaves a failed reply, never one stuck in streaming; strangers get 404.

let strangerToken: string;

// Long enough that a live generator's heartbeat (a third of it) is never late on a loaded machine;
// the test of a killed generator waits this long for its reply to be taken for dead.
const STALE_MS = 10_000;

const { app, newChat, stream, history } = useReplyTestApp('resume@example.com', {
  OPENAI_TIMEOUT_MS: '60000', // no test here waits for it: held streams are released by the test
  OPENAI_MAX_RETRIES: '0',
  STREAM_HEARTBEAT_MS: '1000',
  REPLY_STALE_MS: String(STALE_MS),
});
beforeAll(async () => {
  ({ token: strangerToken } = await app.signIn('stranger-resume@example.com'));
});
beforeEach(() => {
  app.ai.chunkDelayMs = 40;
});

const REPLY = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');

/** GET a reply's stream (a resume): Last-Event-ID and/or ?after. */
async function resume(
  chatId: string,
  messageId: string,
  options: ReadSseOptions & { lastEventId?: string; after?: number; as?: string } = {},
): Promise<SseResult & { statusCode: number; body?: any }> {
  const query = options.after !== undefined ? `?after=${options.after}` : '';
  const response = await fetch(`${app.url}/chat/${chatId}/messages/${messageId}/stream${query}`, {
    headers: {
      authorization: `Bearer ${options.as ?? app.token}`,
      accept: 'text/event-stream',
      ...(options.lastEventId !== undefined && { 'last-event-id': options.lastEventId }),
    },
  });
  if (!response.headers.get('content-type')?.startsWith('text/event-stream'))
    return { statusCode: response.status, body: await response.json() } as never;
  return { ...(await readSse(response, options)), statusCode: response.status };
}

/** The events that carry an id, as [id, name, data]. */
const numbered = (events: SseEvent[]) =>
  events.filter((e) => e.id !== undefined).map((e) => [Number(e.id), e.event ?? 'delta', JSON.parse(e.data)]);

const startOf = (sse: SseResult) => JSON.parse(sse.events.find((e) => e.event === 'start')!.data);

test('every event of a reply has an id 1, 2, …; start names the reply; a finished reply is replayed whole', async () => {
  const chat = await newChat();
  app.ai.setReply(REPLY);
  const live = await stream(chat.id, 'count');
  const events = numbered(live.events);
  expect(events.map(([id]) => id)).toEqual(events.map((_, i) => i + 1));
  expect(events[0]![1]).toBe('start');
  expect(events.at(-1)![1]).toBe('usage');
  const { messageId } = startOf(live);
  const stored = await history(chat.id);
  expect(stored[1]).toMatchObject({ id: messageId, status: 'complete', message: REPLY });

  const replay = await resume(chat.id, messageId);
  expect(replay.statusCode).toBe(200);
  expect(numbered(replay.events)).toEqual(events);
  expect(replay.last()).toBe('[DONE]');
});

test('a stream cut after a few deltas and resumed with Last-Event-ID joins into the uncut run: no gap, no duplicate', async () => {
  const chat = await newChat();
  app.ai.setReply(REPLY);
  const uncut = numbered((await stream(chat.id, 'uncut')).events);

  // The model holds after four deltas, so the reply is still being generated when it is read.
  const release = app.ai.holdStreamAfter(4);
  const cut = await stream(chat.id, 'cut', { stopWhen: (events) => events.filter((e) => !e.event).length >= 4 });
  expect(cut.stoppedEarly).toBe(true);
  const had = numbered(cut.events);
  const { messageId } = startOf(cut);
  // While it is generated, the reply reads as streaming with its text so far.
  const growing = await until(
    'the reply stored as it grows',
    () => history(chat.id),
    (m) => m[3]?.status === 'streaming' && m[3].message.length > 0,
  );
  expect(REPLY.startsWith(growing[3].message)).toBe(true);
  release();

  const rest = await resume(chat.id, messageId, { lastEventId: String(had.at(-1)![0]) });
  const joined = [...had, ...numbered(rest.events)];
  // The same events under the same ids as the uncut run (the ids of the start event differ only in its data).
  expect(joined.map(([id, name]) => [id, name])).toEqual(uncut.map(([id, name]) => [id, name]));
  expect(joined.filter(([, name]) => name === 'delta').map(([, , d]) => d.content)).toEqual(
    uncut.filter(([, name]) => name === 'delta').map(([, , d]) => d.content),
  );
  expect(rest.last()).toBe('[DONE]');

  // ?after=n does the same as the header.
  const again = await resume(chat.id, messageId, { after: had.at(-1)![0] as number });
  expect(numbered(again.events)).toEqual(numbered(rest.events));
});

test('an abandoned stream is stored complete; a resume from anywhere follows the live generation to its end', async () => {
  const chat = await newChat();
  app.ai.setReply(REPLY);
  app.ai.chunkDelayMs = 80;
  const first = await stream(chat.id, 'leave', { stopWhen: (events) => events.some((e) => e.event === 'start') });
  const { messageId } = startOf(first);
  const followed = await resume(chat.id, messageId, { lastEventId: '1' });
  const deltas = numbered(followed.events).filter(([, name]) => name === 'delta');
  expect(deltas.map(([, , d]) => d.content).join('')).toBe(REPLY);
  expect(numbered(followed.events).at(-1)![1]).toBe('usage');
  const stored = await eventually(
    () => history(chat.id),
    (m) => m[1]?.status === 'complete',
  );
  expect(stored[1].message).toBe(REPLY);
});

test('a stop from another connection ends the generation and every stream of it', async () => {
  const chat = await newChat();
  app.ai.setReply(REPLY);
  // The model holds after three deltas: the stop finds the generation under way, whatever the machine's speed.
  const release = app.ai.holdStreamAfter(3);
  let messageId: string | undefined;
  const stopped: { body?: any } = {};
  const live = stream(chat.id, 'stop me', {
    onChunk: (events) => {
      if (messageId || !events.some((e) => e.event === 'start')) return;
      messageId = JSON.parse(events.find((e) => e.event === 'start')!.data).messageId;
    },
  });
  await until(
    'three deltas',
    async () => messageId && (await history(chat.id))[1],
    (m) => !!m && m.message.split(' ').length >= 3,
  );
  const follower = resume(chat.id, messageId!, { lastEventId: '1' });
  const res = await app.request('POST', `/chat/${chat.id}/messages/${messageId}/stop`, { token: app.token });
  stopped.body = res.body;
  expect(res.status).toBe(200);
  expect(res.body.data).toMatchObject({ id: messageId, status: 'stopped', incomplete: true });
  expect(res.body.data.message.length).toBeGreaterThan(0);
  expect(res.body.data.message.length).toBeLessThan(REPLY.length);
  expect(res.body.data.usage.completionTokens).toBeGreaterThan(0);

  const [liveSse, followerSse] = await Promise.all([live, follower]);
  for (const sse of [liveSse, followerSse]) {
    const names = numbered(sse.events).map(([, name]) => name);
    expect(names.slice(-2)).toEqual(['usage', 'stopped']);
    expect(sse.last()).toBe('[DONE]');
  }
  // The service abandoned its model call: the generation ended where the stop found it.
  expect(app.ai.requests.at(-1)!.clientClosedEarly).toBe(true);
  const text = numbered(liveSse.events)
    .filter(([, name]) => name === 'delta')
    .map(([, , d]) => d.content)
    .join('');
  expect((await history(chat.id))[1]).toMatchObject({ status: 'stopped', message: text });
  // Stopping a finished reply changes nothing.
  const twice = await app.request('POST', `/chat/${chat.id}/messages/${messageId}/stop`, { token: app.token });
  expect(twice.status).toBe(200);
  expect(twice.body.data).toEqual(stopped.body.data);
  release();
});

test('a generator whose instance is killed leaves a failed reply, never one stuck in streaming', async () => {
  const chat = await newChat();
  app.ai.setReply(REPLY);
  // The model holds after three deltas: the instance is still generating when it is killed.
  const release = app.ai.holdStreamAfter(3);
  const live = await stream(chat.id, 'die', { stopWhen: (events) => events.filter((e) => !e.event).length >= 3 });
  const { messageId } = startOf(live);
  const instances = app.functions.instances('send-message').filter((i) => i.busy);
  expect(instances.length).toBeGreaterThan(0);
  for (const inst of instances) process.kill(inst.pid, 'SIGKILL');
  release();

  const followed = await resume(chat.id, messageId, { lastEventId: '1' });
  const events = numbered(followed.events);
  expect(events.at(-1)![1]).toBe('error');
  expect(events.at(-1)![2].message).toMatch(/interrupted/);
  const stored = await history(chat.id);
  expect(stored[1]).toMatchObject({ id: messageId, status: 'failed', incomplete: true });
  expect(REPLY.startsWith(stored[1].message)).toBe(true);
});

test("another user's reply is 404 to resume and stop; a malformed Last-Event-ID is 400", async () => {
  const chat = await newChat();
  app.ai.setReply('short');
  const { messageId } = startOf(await stream(chat.id, 'mine'));
  const resumed = await resume(chat.id, messageId, { as: strangerToken });
  expect(resumed.statusCode).toBe(404);
  const stop = await app.request('POST', `/chat/${chat.id}/messages/${messageId}/stop`, { token: strangerToken });
  expect(stop.status).toBe(404);
  const list = await app.request('GET', `/chat/${chat.id}/messages`, { token: strangerToken });
  expect(list.status).toBe(404);
  const bad = await resume(chat.id, messageId, { lastEventId: 'x1' });
  expect(bad.statusCode).toBe(400);
  expect(bad.body.errors[0].path).toBe('headers.last-event-id');
});
