import { useTestApp } from '#test/helpers/app.ts';
import { makeTextPdf } from '#test/helpers/make-pdf.ts';
import { postSse, readSse } from '#test/helpers/sse.ts';
import { until } from '#test/helpers/until.ts';
import { UsageCounters } from '#shared/limits/usage-counters.ts';
import { InFlightSlots } from '#shared/limits/in-flight-slots.ts';
import { tokenCounter, utcDay } from '#shared/limits/user-limits.ts';
import { errorShapeProblem } from './routes-under-test.ts';

// Per-user limits under concurrency and a budget that charges whatever is sent to a model, through
// the gateway with the OpenAI loopback server holding or cutting its answers: replies in flight
// per user, and every model request charged however it ends (a file deleted during its
// embedding, a stream cut before its first token, history and passages reserved, the query's
// embedding).

const BUDGET = 1_000_000;
const REPLY_MAX_TOKENS = 100;
const MAX_REPLIES = 2;
const MAX_FOLLOWERS = 2;
const MAX_FOLLOWS = 3;

let counters: UsageCounters;
let slots: InFlightSlots;

const app = useTestApp(
  async () => ({
    model: 'openai',
    pdfs: { '/animals.pdf': { body: Buffer.from(await makeTextPdf(2, 6)) } },
    env: {
      DAILY_TOKEN_BUDGET: String(BUDGET),
      REPLY_MAX_TOKENS: String(REPLY_MAX_TOKENS),
      REPLIES_MAX_IN_FLIGHT_PER_USER: String(MAX_REPLIES),
      REPLY_MAX_FOLLOWERS: String(MAX_FOLLOWERS),
      FOLLOWS_MAX_IN_FLIGHT_PER_USER: String(MAX_FOLLOWS),
      // A follower that left is noticed at its stream's next write: the keep-alive, when the reply is quiet.
      STREAM_HEARTBEAT_MS: '200',
    },
  }),
  {
    ready: async (app) => {
      const { db } = app.clients();
      counters = new UsageCounters(db, app.tableName);
      slots = new InFlightSlots(db, app.tableName);
    },
  },
);
beforeEach(() => app.ai.reset());

let people = 0;
const person = () => app.signIn(`under-load-${++people}@example.com`);
const todaysTokens = (userId: string) => counters.get({ subject: userId, counter: tokenCounter(utcDay(Date.now())) });
/** A named chat (a chat without a name would be titled by one more model call). */
const newChat = async (token: string, type = 'text') =>
  (await app.request('POST', '/chat', { token, body: { name: 'Under load', type } })).body.data.id as string;
const prompt = (token: string, chatId: string, text: string) =>
  app.request('POST', '/message/logged-in', { token, body: { chatId, prompt: text } });
const streamed = (token: string, chatId: string, text: string) =>
  postSse(`${app.url}/message/logged-in`, token, { chatId, prompt: text, stream: true });
const chatRequests = () => app.ai.count('/v1/chat/completions');
/** What the budget counts for a text: about three characters a token (shared/ai/tokens.ts). */
const estimated = (messages: { content: string }[]) =>
  messages.reduce((n, m) => n + Math.ceil(m.content.length / 3) + 4, 0);
/** What the loopback server reports for embedded texts. */
const embeddedTokens = (input: string | string[]) =>
  (typeof input === 'string' ? [input] : input).reduce((n, text) => n + Math.max(1, Math.ceil(text.length / 4)), 0);

async function uploadFile(token: string) {
  const res = await app.request('POST', '/upload', {
    token,
    body: { fileName: 'animals.pdf', contentType: 'application/pdf', size: 5000 },
  });
  return res.body.data.fileId as string;
}

describe('replies in flight per user', () => {
  test('over REPLIES_MAX_IN_FLIGHT_PER_USER a prompt is 429 (whole, streamed, regenerated) while another user is answered; slots come back after finish and failure', async () => {
    const { token } = await person();
    const chatId = await newChat(token);
    const first = await prompt(token, chatId, 'a first question');
    expect(first.status).toBe(200); // its slot was given back at its end

    // Two slow replies (one whole, one streamed): the model holds both until released.
    const release = [app.ai.holdNext({ only: 'chat' }), app.ai.holdNext({ only: 'chat' })];
    const heldWhole = prompt(token, chatId, 'slow whole');
    const heldStream = streamed(token, chatId, 'slow streamed');
    await until('both slow replies at the model', chatRequests, (n) => n === 3); // the first reply's, and these two

    const refused = [
      await prompt(token, chatId, 'one too many'),
      await app.request('POST', '/message/logged-in', { token, body: { chatId, prompt: 'streamed', stream: true } }),
      await app.request('POST', `/chat/${chatId}/messages/${first.body.data.messageId}/regenerate`, {
        token,
        body: {},
      }),
    ];
    for (const res of refused) {
      expect(res.status).toBe(429);
      expect(errorShapeProblem('envelope', 429, res.body)).toBeUndefined();
      expect(res.headers.get('retry-after')).toBe('5');
      expect(res.body.message).toBe(`You already have ${MAX_REPLIES} replies in progress; wait for one to finish`);
    }
    // Another user's reply proceeds meanwhile.
    const other = await person();
    expect((await prompt(other.token, await newChat(other.token), 'my turn')).status).toBe(200);

    for (const go of release) go();
    const [whole, stream] = await Promise.all([heldWhole, heldStream]);
    expect(whole.status).toBe(200);
    expect(stream.events.at(-1)?.data).toBe('[DONE]');

    // Failed replies give their slots back too.
    app.ai.failNext(1, 400, { only: 'chat' });
    expect((await prompt(token, chatId, 'refused by the model')).status).toBe(502);
    app.ai.failNext(1, 400, { only: 'chat' });
    expect((await streamed(token, chatId, 'refused streamed')).events.some((e) => e.event === 'error')).toBe(true);
    const again = [app.ai.holdNext({ only: 'chat' }), app.ai.holdNext({ only: 'chat' })];
    const before = chatRequests();
    const admitted = [prompt(token, chatId, 'slow again'), prompt(token, chatId, 'and again')];
    await until('both replies at the model again', chatRequests, (n) => n === before + 2);
    for (const go of again) go();
    expect((await Promise.all(admitted)).map((r) => r.status)).toEqual([200, 200]);
  });

  test('slots held by replies whose invocations died are free once their leases run out, not before', async () => {
    const { token, user } = await person();
    const chatId = await newChat(token);
    const key = { subject: user.id, kind: 'replies' };
    // Two replies that took the slots and died (no release): one lease still running, one not.
    const now = Date.now();
    await slots.take(key, { holder: 'died-recently', max: 1, leaseMs: 600_000, now });
    await slots.take(key, { holder: 'died-long-ago', max: 2, leaseMs: 1_000, now: now - 600_000 });
    expect((await slots.held(key)).map((s) => s.holder).sort()).toEqual(['died-long-ago', 'died-recently']);

    expect((await prompt(token, chatId, 'the expired slot is mine')).status).toBe(200);
    // Released at its end: the slot is free again, the other still held by its lease.
    expect((await slots.held(key)).map((s) => s.holder)).toEqual(['died-recently']);
    const release = app.ai.holdNext({ only: 'chat' });
    const holding = prompt(token, chatId, 'holding the free slot');
    await until(
      'the reply at the model',
      () => app.ai.count('/v1/chat/completions'),
      (n) => n === 2,
    );
    expect((await prompt(token, chatId, 'no slot left')).status).toBe(429);
    release();
    expect((await holding).status).toBe(200);
  });
});

/** A follower of a reply (GET …/stream): its response once the head came, and a way to leave. */
async function follow(token: string, chatId: string, messageId: string) {
  const leaving = new AbortController();
  const res = await fetch(`${app.url}/chat/${chatId}/messages/${messageId}/stream`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
    signal: leaving.signal,
  });
  const streaming = res.headers.get('content-type')?.startsWith('text/event-stream') ?? false;
  return { res, body: streaming ? undefined : ((await res.json()) as any), leave: () => leaving.abort() };
}

/** A streamed reply left once it started (it goes on), by its message id. */
async function startedReply(token: string, chatId: string, text: string): Promise<string> {
  const sse = await postSse(
    `${app.url}/message/logged-in`,
    token,
    { chatId, prompt: text, stream: true },
    { stopWhen: (events) => events.some((e) => e.event === 'start') },
  );
  return JSON.parse(sse.events.find((e) => e.event === 'start')!.data).messageId;
}

describe('followers of a reply', () => {
  test('over REPLY_MAX_FOLLOWERS of one reply, or FOLLOWS_MAX_IN_FLIGHT_PER_USER of one user, a follow is 429 while another user follows; slots come back when followers leave and when the reply ends', async () => {
    const { token, user } = await person();
    const chatId = await newChat(token);
    // Two replies being generated: the model holds both.
    const release = [app.ai.holdNext({ only: 'chat' }), app.ai.holdNext({ only: 'chat' })];
    const first = await startedReply(token, chatId, 'first live');
    const second = await startedReply(token, chatId, 'second live');
    const held = () => slots.held({ subject: user.id, kind: 'follows' });

    const firstFollowers = [await follow(token, chatId, first), await follow(token, chatId, first)];
    expect(firstFollowers.map((f) => f.res.status)).toEqual([200, 200]);
    const overReply = await follow(token, chatId, first);
    const secondFollower = await follow(token, chatId, second);
    expect(secondFollower.res.status).toBe(200);
    const overUser = await follow(token, chatId, second);
    for (const [refused, message] of [
      [overReply, `This reply already has ${MAX_FOLLOWERS} open streams of yours; close one first`],
      [overUser, `You already have ${MAX_FOLLOWS} reply streams open; close one first`],
    ] as const) {
      expect(refused.res.status).toBe(429);
      expect(errorShapeProblem('envelope', 429, refused.body)).toBeUndefined();
      expect(refused.res.headers.get('retry-after')).toBe('5');
      expect(refused.body.message).toBe(message);
    }

    // Another user follows their reply at once, to its end.
    const other = await person();
    const otherChat = await newChat(other.token);
    app.ai.setReply('all mine');
    const theirs = await postSse(`${app.url}/message/logged-in`, other.token, {
      chatId: otherChat,
      prompt: 'mine',
      stream: true,
    });
    const start = JSON.parse(theirs.events.find((e) => e.event === 'start')!.data);
    const replay = await follow(other.token, otherChat, start.messageId);
    expect(replay.res.status).toBe(200);
    const replayed = await readSse(replay.res);
    expect(replayed.deltas().join('')).toBe('all mine');
    expect(replayed.last()).toBe('[DONE]');

    // Followers that leave give their slots back: new ones are accepted.
    for (const f of firstFollowers) f.leave();
    await until('the slots of the followers that left', held, (slots) => slots.length === 1);
    const again = [await follow(token, chatId, first), await follow(token, chatId, first)];
    expect(again.map((f) => f.res.status)).toEqual([200, 200]);

    // The end of the replies ends their followers and frees every slot.
    for (const go of release) go();
    for (const f of [...again, secondFollower]) expect((await readSse(f.res)).last()).toBe('[DONE]');
    await until('every follower slot free', held, (slots) => slots.length === 0);
    expect(await slots.held({ subject: user.id, kind: `followers#${first}` })).toEqual([]);
  });
});

describe('a run that ended frees its own slot', () => {
  test("only the slot its holder still holds: never another run's, and a second release changes nothing", async () => {
    const { user } = await person();
    const key = { subject: user.id, kind: 'ingestions' };
    const now = Date.now();
    await slots.take(key, { holder: 'file#superseded', max: 2, leaseMs: 600_000, now });
    await slots.take(key, { holder: 'file#current', max: 2, leaseMs: 600_000, now });

    await slots.releaseHeldBy(key, 'file#superseded');
    expect((await slots.held(key)).map((s) => s.holder)).toEqual(['file#current']);
    // Its slot is taken by a new run; the ended run's release arrives again (another of its messages).
    await slots.take(key, { holder: 'file#next', max: 2, leaseMs: 600_000, now });
    await slots.releaseHeldBy(key, 'file#superseded');
    expect((await slots.held(key)).map((s) => s.holder).sort()).toEqual(['file#current', 'file#next']);
  });
});

describe('whatever is sent to a model is charged', () => {
  test('a file deleted while its embedding request was out: the tokens embedded are charged', async () => {
    const { token, user } = await person();
    const fileId = await uploadFile(token);
    const release = app.ai.holdNext({ only: 'embeddings' });
    const ingestion = app.request('POST', '/message/pdf', {
      token,
      body: { url: `${app.pdfs.url}/animals.pdf`, fileId },
    });
    await until(
      'the embedding request held',
      () => app.ai.count('/v1/embeddings'),
      (n) => n === 1,
    );
    expect((await app.request('DELETE', `/upload/${fileId}`, { token })).status).toBe(200);
    release();
    expect((await ingestion).status).toBe(404);
    const [request] = app.ai.embeddingRequests();
    const tokens = embeddedTokens(request!.input);
    expect(
      await until(
        'the embedding charged',
        () => todaysTokens(user.id),
        (n) => n >= tokens,
      ),
    ).toBe(tokens);
  });

  test('a streamed reply cut before its first token is charged the prompt it was sent', async () => {
    const { token, user } = await person();
    const chatId = await newChat(token);
    app.ai.cutStreamAfter(0);
    const cut = await streamed(token, chatId, 'Will you answer at all?');
    expect(cut.events.some((e) => e.event === 'error')).toBe(true);
    const [sent] = app.ai.chatRequests();
    expect(await todaysTokens(user.id)).toBe(estimated(sent!.messages));
  });

  test('the reservation counts the history sent with the prompt: a reply whose whole prompt does not fit is refused', async () => {
    const { token, user } = await person();
    const chatId = await newChat(token);
    app.ai.setReply('Noted.');
    expect((await prompt(token, chatId, `Remember this: ${'lorem ipsum '.repeat(500)}`)).status).toBe(200);
    // Room for a short prompt with the system message and the longest reply, not for the history too.
    const used = await todaysTokens(user.id);
    await counters.add(
      { subject: user.id, counter: tokenCounter(utcDay(Date.now())) },
      BUDGET - used - (REPLY_MAX_TOKENS + 300),
    );
    const refused = await prompt(token, chatId, 'And now?');
    expect(refused.status).toBe(429);
    expect(refused.body.message).toMatch(/daily token budget/);
    // The same prompt without history fits.
    expect((await prompt(token, await newChat(token), 'And now?')).status).toBe(200);
  });

  test("the query's embedding in a file chat is charged with the reply", async () => {
    const { token, user } = await person();
    const chatId = await newChat(token, 'file');
    const fileId = await uploadFile(token);
    const ingested = await app.request('POST', '/message/pdf', {
      token,
      body: { url: `${app.pdfs.url}/animals.pdf`, fileId, chatId },
    });
    expect(ingested.status).toBe(200);
    const before = await todaysTokens(user.id);
    app.ai.reset();
    const question = 'Which animals are named on the first page?';
    const res = await prompt(token, chatId, question);
    expect(res.status).toBe(200);
    expect(app.ai.embeddingRequests().map((r) => r.input)).toEqual([[question]]);
    expect((await todaysTokens(user.id)) - before).toBe(res.body.data.usage.totalTokens + embeddedTokens(question));
  });
});
