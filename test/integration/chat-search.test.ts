import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { messageKey } from '#shared/chats/keys.ts';
import { SearchIndex, termPk } from '#shared/chats/search/search-index.ts';
import { SEARCH_MAX_CANDIDATES } from '#shared/chats/search/search-service.ts';
import { useReplyTestApp } from '#test/helpers/chat-calls.ts';
import { until } from '#test/helpers/until.ts';

// GET /chat/search through the local gateway: words in any script (case, accents and CJK
// bigrams), chat names, paging with the cursor, strangers, deleted chats, bad queries, and a
// streamed reply found once it has ended (docs/DECISIONS.md, Chat search).

let db: DynamoDBDocumentClient;
let strangerToken: string;

const { app, newChat, stream } = useReplyTestApp('searcher@example.com', { OPENAI_MAX_RETRIES: '0' });
beforeAll(async () => {
  ({ db } = app.clients());
  ({ token: strangerToken } = await app.signIn('stranger-search@example.com'));
});

/** The rows of the user's search index under `term` that still point at messages. */
async function termRefs(term: string) {
  const rows = await db.send(
    new QueryCommand({
      TableName: app.tableName,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': termPk(app.user.id, term) },
    }),
  );
  return rows.Items?.filter((i) => i.refs);
}

/** Sends a prompt and waits for the whole reply (the model answers `reply`). */
async function say(chatId: string, prompt: string, reply = 'Noted.') {
  app.ai.setReply(reply);
  const res = await app.request('POST', '/message/logged-in', { token: app.token, body: { chatId, prompt } });
  expect(res.status).toBe(200);
  return res.body.data as { messageId: string; userMessageId: string };
}

const search = (q: string, options: { as?: string; limit?: number; cursor?: string } = {}) => {
  const params = new URLSearchParams({ q });
  if (options.limit) params.set('limit', String(options.limit));
  if (options.cursor) params.set('cursor', options.cursor);
  return app.request('GET', `/chat/search?${params}`, { token: options.as ?? app.token });
};

const found = async (q: string, as?: string) => {
  const res = await search(q, { as });
  expect(res.status).toBe(200);
  return res.body.data as {
    chatId: string;
    chatName: string;
    messageId: string | null;
    snippet: string;
    timestamp: string;
  }[];
};

test('a word of a prompt or a reply is found, whatever its case and accents, with the chat and a snippet', async () => {
  const chat = await newChat({ name: 'Holiday plans', type: 'text' });
  const sent = await say(chat.id, 'Where should I go to see the Aurora Borealis?', 'Try Tromsø in Norway in February.');

  const prompt = await found('aurora');
  expect(prompt).toEqual([
    {
      chatId: chat.id,
      chatName: 'Holiday plans',
      messageId: sent.userMessageId,
      snippet: 'Where should I go to see the Aurora Borealis?',
      timestamp: expect.any(String),
    },
  ]);
  expect((await found('TROMSO')).map((h) => h.messageId)).toEqual([sent.messageId]);
  expect((await found('tromsø norway')).map((h) => h.messageId)).toEqual([sent.messageId]);
  // Every word must match: one the message lacks leaves it out.
  expect(await found('tromsø sweden')).toEqual([]);
  expect(await found('xylophone')).toEqual([]);
});

test('CJK text is found by any two characters of it, with no spaces between words', async () => {
  const chat = await newChat({ name: '日本語の練習', type: 'text' });
  const sent = await say(chat.id, '日本語の文章を読みたい', '한국어 문장도 좋습니다');

  const byTwo = await found('日本');
  expect(byTwo.map((h) => h.messageId)).toEqual([sent.userMessageId, null]); // the message, then the name (older)
  expect(byTwo[0]!.snippet).toBe('日本語の文章を読みたい');
  expect((await found('文章')).map((h) => h.messageId)).toEqual([sent.userMessageId]);
  expect((await found('문장')).map((h) => h.messageId)).toEqual([sent.messageId]);
  expect(await found('文書')).toEqual([]);
});

test("a chat's name is found (messageId null), and a rename replaces it", async () => {
  const chat = await newChat({ name: 'Sourdough experiments', type: 'text' });
  expect(await found('sourdough')).toEqual([
    {
      chatId: chat.id,
      chatName: 'Sourdough experiments',
      messageId: null,
      snippet: 'Sourdough experiments',
      timestamp: chat.createdAt,
    },
  ]);

  const renamed = await app.request('PUT', `/chat/${chat.id}`, { token: app.token, body: { name: 'Rye bread log' } });
  expect(renamed.status).toBe(200);
  expect(await found('sourdough')).toEqual([]);
  expect((await found('rye')).map((h) => [h.chatId, h.chatName, h.messageId])).toEqual([
    [chat.id, 'Rye bread log', null],
  ]);
  // The old name's entries are gone from the index itself, not only hidden at read.
  expect(await termRefs('sourdough')).toEqual([]);
});

test('pages follow the cursor, newest first, each hit once, until no cursor is left', async () => {
  const chat = await newChat({ name: 'Paging', type: 'text' });
  const sent: string[] = [];
  for (let i = 1; i <= 4; i++) {
    const r = await say(chat.id, `pangolin question ${i}`, `pangolin answer ${i}`);
    sent.push(r.userMessageId, r.messageId);
  }

  const seen: { messageId: string | null; timestamp: string }[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const res = await search('pangolin', { limit: 3, cursor });
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeLessThanOrEqual(3);
    seen.push(...res.body.data);
    cursor = res.headers.get('x-next-cursor') ?? undefined;
    pages++;
  } while (cursor && pages < 10);

  expect(cursor).toBeUndefined();
  expect(pages).toBe(3);
  expect(seen.map((h) => h.messageId)).toEqual([...sent].reverse());
  const times = seen.map((h) => h.timestamp);
  expect(times).toEqual([...times].sort().reverse());
});

test("a stranger never finds another user's chats, and their cursor is refused", async () => {
  const chat = await newChat({ name: 'Private wombat notes', type: 'text' });
  await say(chat.id, 'wombat diary one', 'wombat reply one');
  await say(chat.id, 'wombat diary two', 'wombat reply two');
  expect((await found('wombat')).length).toBe(5);

  expect(await found('wombat', strangerToken)).toEqual([]);
  const first = await search('wombat', { limit: 2 });
  const cursor = first.headers.get('x-next-cursor')!;
  expect(cursor).toBeTruthy();
  const stolen = await search('wombat', { as: strangerToken, cursor });
  expect([stolen.status, stolen.body.message]).toEqual([400, 'Invalid cursor']);
});

test('a deleted chat is no longer found, and its entries leave the index', async () => {
  const chat = await newChat({ name: 'Platypus facts', type: 'text' });
  await say(chat.id, 'Do platypus lay eggs?', 'Yes, the platypus lays eggs.');
  expect((await found('platypus')).length).toBe(3);

  expect((await app.request('DELETE', `/chat/${chat.id}`, { token: app.token })).status).toBe(200);
  expect(await found('platypus')).toEqual([]);
  expect(await found('eggs')).toEqual([]);
  expect(await termRefs('platypus')).toEqual([]);
});

/**
 * A streamed reply in a new chat, the model held after `deltas` deltas: the chat, the release, the
 * stream being read, and the stored reply once `ok` accepts its text.
 */
async function heldReply(reply: string, prompt: string, deltas: number, what: string, ok: (text: string) => boolean) {
  const chat = await newChat({ type: 'text' });
  app.ai.setReply(reply);
  const release = app.ai.holdStreamAfter(deltas);
  const reading = stream(chat.id, prompt);
  const stored = await until(what, async () => {
    const res = await app.request('GET', `/chat/${chat.id}/messages`, { token: app.token });
    return (res.body.data as any[]).find((m) => m.messageType === 'ai' && ok(m.message));
  });
  return { chat, release, reading, stored };
}

test('a streamed reply is found once it has ended, not while it streams', async () => {
  const {
    release,
    reading,
    stored: start,
  } = await heldReply(
    'Capybaras enjoy warm baths in winter',
    'Tell me about rodents',
    2,
    'the reply to start streaming',
    (message) => message !== '',
  );
  expect(start.status).toBe('streaming');
  expect(await found('capybaras')).toEqual([]);

  release();
  const sse = await reading;
  expect(sse.events.at(-1)?.data).toBe('[DONE]');
  const hits = await until(
    'the finished reply to be found',
    () => found('winter baths'),
    (h) => h.length > 0,
  );
  expect(hits.map((h) => h.messageId)).toEqual([start.id]);
  expect(hits[0]!.snippet).toBe('Capybaras enjoy warm baths in winter');
});

test('a stopped reply is found by the text it had when it stopped', async () => {
  const {
    chat,
    release,
    reading,
    stored: reply,
  } = await heldReply(
    'Narwhals carry one long tusk through icy water',
    'Tell me about whales',
    3,
    'the reply to store its first words',
    (message) => message.includes('Narwhals'),
  );
  const stopped = await app.request('POST', `/chat/${chat.id}/messages/${reply.id}/stop`, { token: app.token });
  expect(stopped.status).toBe(200);
  release();
  await reading;
  const hits = await until(
    'the stopped reply to be found',
    () => found('narwhals'),
    (h) => h.length > 0,
  );
  expect(hits.map((h) => [h.messageId, h.snippet.startsWith('Narwhals')])).toEqual([[reply.id, true]]);
});

test('an empty, blank, over-long or wordless q is a 400; so is a forged cursor', async () => {
  for (const q of ['', '   ', 'x'.repeat(201), '!!! ?', 'a']) {
    const res = await search(q);
    expect([q, res.status, res.body.success]).toEqual([q, 400, false]);
  }
  const missing = await app.request('GET', '/chat/search', { token: app.token });
  expect(missing.status).toBe(400);
  const forged = await search('anything', { cursor: Buffer.from('{"before":42}').toString('base64url') });
  expect(forged.status).toBe(400);
  expect(forged.body.message).toBe('Invalid cursor');
  // A long query of many words is cut to its first terms, within the length cap, and answers.
  const many = await search(Array.from({ length: 40 }, (_, i) => `w${i}`).join(' '));
  expect(many.status).toBe(200);
  expect((await app.request('GET', '/chat/search?q=x', {})).status).toBe(401);
});

test('GET /chat/{chatId} still reaches the chat beside the literal /chat/search', async () => {
  const chat = await newChat({ name: 'Beside search', type: 'text' });
  const res = await app.request('GET', `/chat/${chat.id}`, { token: app.token });
  expect(res.status).toBe(200);
  expect(res.body.data.id).toBe(chat.id);
});

test('a term in more messages than a request may check is answered over several bounded requests', async () => {
  // 300 entries of chats that no longer exist (5 a day over 60 days), and one real message, oldest.
  const chat = await newChat({ name: 'Old notes', type: 'text' });
  const day = (d: number, n: number) => new Date(Date.UTC(2025, 0, 1 + d, 12, n)).toISOString();
  const gone = Array.from({ length: 300 }, (_, i) => ({
    id: `m${String(i).padStart(23, '0')}`,
    chatId: 'z'.repeat(24),
    userId: app.user.id,
    message: 'the ocelot sleeps',
    type: 'message' as const,
    sequenceNumber: i + 1,
    timestamp: day(60 - Math.floor(i / 5), i % 5),
  }));
  const real = { ...gone[0]!, id: 'r'.repeat(24), chatId: chat.id, messageType: 'user', timestamp: day(0, 0) };
  await db.send(new PutCommand({ TableName: app.tableName, Item: { ...messageKey(chat.id, 1), ...real } }));
  await new SearchIndex(db, app.tableName).addMessages([...gone, real]);

  const pages: { data: any[]; cursor: string | null }[] = [];
  let cursor: string | undefined;
  do {
    const res = await search('ocelot', { limit: 5, cursor });
    expect(res.status).toBe(200);
    cursor = res.headers.get('x-next-cursor') ?? undefined;
    pages.push({ data: res.body.data, cursor: cursor ?? null });
  } while (cursor && pages.length < 10);

  // No request checked more than its share: the first ends with nothing found and a cursor.
  expect(pages.length).toBe(Math.ceil(301 / SEARCH_MAX_CANDIDATES));
  expect(pages[0]).toEqual({ data: [], cursor: expect.any(String) });
  expect(pages.at(-1)).toEqual({
    data: [
      {
        chatId: chat.id,
        chatName: 'Old notes',
        messageId: real.id,
        snippet: 'the ocelot sleeps',
        timestamp: real.timestamp,
      },
    ],
    cursor: null,
  });
});
