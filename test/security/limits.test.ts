import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { startTestApp, type TestApp, type TestResponse } from '#test/helpers/app.ts';
import { fixturePdf } from '#test/helpers/make-pdf.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '#infra/local/emulators.ts';
import { UsageCounters } from '#shared/limits/usage-counters.ts';
import { tokenCounter, utcDay } from '#shared/limits/user-limits.ts';
import { errorShapeProblem } from './routes-under-test.ts';

// Per-user limits that hold across Lambda instances. Every request below goes
// through the real gateway and handlers; the limits live in DynamoDB only (no instance keeps
// any state), so concurrent requests racing for the last unit are the cross-instance case.

const PER_MINUTE = { messages: 3, ingestions: 2, uploads: 2, follows: 3, pages: 3 };
const BUDGET = 50_000;
const REPLY_MAX_TOKENS = 1_000;

let app: TestApp;
let counters: UsageCounters;
const tally = { refused: 0 };

beforeAll(async () => {
  app = await startTestApp({
    pdfs: { '/hello.pdf': { body: await fixturePdf('hello-world.pdf') } },
    env: {
      RATE_LIMIT_MESSAGES_PER_MINUTE: String(PER_MINUTE.messages),
      RATE_LIMIT_INGESTIONS_PER_MINUTE: String(PER_MINUTE.ingestions),
      RATE_LIMIT_UPLOADS_PER_MINUTE: String(PER_MINUTE.uploads),
      RATE_LIMIT_FOLLOWS_PER_MINUTE: String(PER_MINUTE.follows),
      RATE_LIMIT_PAGES_PER_MINUTE: String(PER_MINUTE.pages),
      // No ingestion queue, so no burst: the per-minute windows themselves are under test here
      // (the burst is test/integration/pdf-bulk-ingestion.test.ts's).
      PDF_MAX_QUEUED_PER_USER: '0',
      DAILY_TOKEN_BUDGET: String(BUDGET),
      REPLY_MAX_TOKENS: String(REPLY_MAX_TOKENS),
    },
  });
  const db = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: app.endpoints.dynamodb, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS }),
  );
  counters = new UsageCounters(db, app.tableName);
});
afterAll(async () => {
  await app?.stop();
  console.log(
    `Per-user limits: ${tally.refused} requests over a limit, each a 429 with Retry-After in the route's body shape`,
  );
});

let people = 0;
const person = () => app.signIn(`limited-${++people}@example.com`);

/** A burst must not straddle a minute boundary (the window is the UTC minute): start it early in one. */
async function earlyInAMinute() {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 40_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 50));
}

function expectLimited(res: TestResponse, maxRetryAfter: number) {
  tally.refused++;
  expect(res.status).toBe(429);
  expect(errorShapeProblem('envelope', 429, res.body)).toBeUndefined();
  const retryAfter = Number(res.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(maxRetryAfter);
}

const todaysTokens = (userId: string) => counters.get({ subject: userId, counter: tokenCounter(utcDay(Date.now())) });
const upload = (token: string) =>
  app.request('POST', '/upload', { token, body: { fileName: 'a.pdf', contentType: 'application/pdf', size: 743 } });
const chatOf = async (token: string) =>
  (await app.request('POST', '/chat', { token, body: { type: 'text' } })).body.data.id as string;

describe('requests per minute', () => {
  test('uploads: of 8 concurrent requests exactly the allowance passes, the rest are 429; another user is unaffected', async () => {
    await earlyInAMinute();
    const { token } = await person();
    const answers = await Promise.all(Array.from({ length: 8 }, () => upload(token)));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(PER_MINUTE.uploads);
    for (const res of answers.filter((r) => r.status !== 201)) expectLimited(res, 60);
    expect((await upload((await person()).token)).status).toBe(201);
  });

  test('messages: the prompt over the allowance is refused before anything is stored, streamed or not', async () => {
    await earlyInAMinute();
    const { token } = await person();
    const chatId = await chatOf(token);
    for (let i = 0; i < PER_MINUTE.messages; i++) {
      expect(
        (await app.request('POST', '/message/logged-in', { token, body: { chatId, prompt: `hello ${i}` } })).status,
      ).toBe(200);
    }
    const whole = await app.request('POST', '/message/logged-in', { token, body: { chatId, prompt: 'one too many' } });
    expectLimited(whole, 60);
    const streamed = await app.request('POST', '/message/logged-in', {
      token,
      body: { chatId, prompt: 'one too many', stream: true },
    });
    expectLimited(streamed, 60);
    expect(streamed.headers.get('content-type')).toMatch(/application\/json/);
    const messages = (await app.request('GET', `/chat/${chatId}/messages`, { token })).body.data;
    expect(messages.filter((m: { message: string }) => m.message === 'one too many')).toEqual([]);
  });

  test('following a reply: the allowance passes, the follows over it are 429; another user is unaffected', async () => {
    await earlyInAMinute();
    const streamedReply = async (token: string) => {
      const chatId = await chatOf(token);
      const sse = await app.request('POST', '/message/logged-in', {
        token,
        body: { chatId, prompt: 'follow me', stream: true },
      });
      return `/chat/${chatId}/messages/${JSON.parse(/event: start\ndata: (.*)\n/.exec(sse.text)![1]!).messageId}/stream`;
    };
    const { token } = await person();
    const path = await streamedReply(token);
    for (let i = 0; i < PER_MINUTE.follows; i++) {
      const res = await app.request('GET', path, { token });
      expect([res.status, res.text.endsWith('data: [DONE]\n\n')]).toEqual([200, true]);
    }
    expectLimited(await app.request('GET', path, { token }), 60);
    const other = await person();
    expect((await app.request('GET', await streamedReply(other.token), { token: other.token })).status).toBe(200);
  });

  test("a PDF's pages (a first request draws one): the allowance passes, the requests over it are 429; another user is unaffected", async () => {
    await earlyInAMinute();
    const { token } = await person();
    // A file uploaded, not ingested: its pages answer 409, and count.
    const path = `/message/pdf/${(await upload(token)).body.data.fileId}/pages/1`;
    for (let i = 0; i < PER_MINUTE.pages; i++) expect((await app.request('GET', path, { token })).status).toBe(409);
    expectLimited(await app.request('GET', path, { token }), 60);
    expect((await app.request('GET', path, { token: (await person()).token })).status).toBe(404);
  });

  test('PDF ingestion: refused requests count too (an abuser cannot probe for free)', async () => {
    await earlyInAMinute();
    const { token } = await person();
    const fileId = (await upload(token)).body.data.fileId;
    for (let i = 0; i < PER_MINUTE.ingestions; i++) {
      expect(
        (await app.request('POST', '/message/pdf', { token, body: { url: 'ftp://example.com/a.pdf', fileId } })).status,
      ).toBe(400);
    }
    expectLimited(
      await app.request('POST', '/message/pdf', { token, body: { url: `${app.pdfs.url}/hello.pdf`, fileId } }),
      60,
    );
  });
});

describe('daily token budget', () => {
  test('a reply is charged what the provider reports it used, whole or streamed', async () => {
    await earlyInAMinute();
    const { token, user } = await person();
    const chatId = await chatOf(token);
    const whole = await app.request('POST', '/message/logged-in', {
      token,
      body: { chatId, prompt: 'How much do you cost?' },
    });
    expect(whole.status).toBe(200);
    const first = whole.body.data.usage.totalTokens as number;
    expect(first).toBeGreaterThan(0);
    expect(await todaysTokens(user.id)).toBe(first); // the reservation (prompt + REPLY_MAX_TOKENS) was settled

    const streamed = await app.request('POST', '/message/logged-in', {
      token,
      body: { chatId, prompt: 'And streamed?', stream: true },
    });
    const usage = JSON.parse(/event: usage\ndata: (.*)\n/.exec(streamed.text)![1]!) as { totalTokens: number };
    expect(await todaysTokens(user.id)).toBe(first + usage.totalTokens);
  });

  test('embeddings are charged as the file is embedded', async () => {
    await earlyInAMinute();
    const { token, user } = await person();
    const fileId = (await upload(token)).body.data.fileId;
    const res = await app.request('POST', '/message/pdf', {
      token,
      body: { url: `${app.pdfs.url}/hello.pdf`, fileId },
    });
    expect(res.status).toBe(200);
    const tokens = res.body.data.embeddingsData.tokens as number;
    expect(tokens).toBeGreaterThan(0);
    expect(await todaysTokens(user.id)).toBe(tokens);
  });

  test('a spent budget refuses prompts (whole and streamed) and ingestions until midnight UTC; nothing is stored', async () => {
    await earlyInAMinute();
    const { token, user } = await person();
    const chatId = await chatOf(token);
    const fileId = (await upload(token)).body.data.fileId;
    // Spent today by earlier work (any instance): less is left than a reply may need.
    await counters.add({ subject: user.id, counter: tokenCounter(utcDay(Date.now())) }, BUDGET - REPLY_MAX_TOKENS / 2);
    const untilMidnight = Math.ceil((86_400_000 - (Date.now() % 86_400_000)) / 1000);

    const whole = await app.request('POST', '/message/logged-in', { token, body: { chatId, prompt: 'Still there?' } });
    expectLimited(whole, untilMidnight);
    expect(whole.body.message).toMatch(/daily token budget/);
    const streamed = await app.request('POST', '/message/logged-in', {
      token,
      body: { chatId, prompt: 'Still there?', stream: true },
    });
    expectLimited(streamed, untilMidnight);
    expect((await app.request('GET', `/chat/${chatId}/messages`, { token })).body.data).toEqual([]);

    // Spent entirely: ingestion (whose cost is only known later) is refused too.
    await counters.add({ subject: user.id, counter: tokenCounter(utcDay(Date.now())) }, REPLY_MAX_TOKENS);
    expectLimited(
      await app.request('POST', '/message/pdf', { token, body: { url: `${app.pdfs.url}/hello.pdf`, fileId } }),
      untilMidnight,
    );
    expect((await app.request('GET', `/message/pdf/${fileId}`, { token })).body.data.embeddingsData.status).toBe(
      'uploaded',
    );
    // The refusals charged nothing.
    expect(await todaysTokens(user.id)).toBe(BUDGET + REPLY_MAX_TOKENS / 2);
  });

  test('concurrent prompts never reserve past the budget together', async () => {
    await earlyInAMinute();
    const { token, user } = await person();
    const chatId = await chatOf(token);
    // Room for exactly one reservation (the system message, a short prompt and REPLY_MAX_TOKENS), not two.
    await counters.add(
      { subject: user.id, counter: tokenCounter(utcDay(Date.now())) },
      BUDGET - REPLY_MAX_TOKENS - 100,
    );
    const answers = await Promise.all(
      [1, 2, 3].map((i) => app.request('POST', '/message/logged-in', { token, body: { chatId, prompt: `race ${i}` } })),
    );
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    for (const res of answers.filter((r) => r.status !== 200)) expectLimited(res, 86_400);
  });
});
