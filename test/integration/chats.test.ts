import { type DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { appendMessage } from '#shared/chats/conversations/message-repository.ts';
import { NotFoundError } from '#shared/errors.ts';
import { DEFAULT_CHAT_NAME, DEFAULT_SYSTEM_MESSAGE } from '#shared/chats/schemas.ts';
import { useTestApp } from '#test/helpers/app.ts';
import { postSse } from '#test/helpers/sse.ts';
import { knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';

// Chat CRUD, message listing, ownership, and the offline provider (no OPENAI_API_KEY here).

let db: DynamoDBDocumentClient;
let alice: { token: string; user: any };
let bob: { token: string; user: any };
const app = useTestApp(
  { pdfs: true },
  {
    ready: async (app) => {
      ({ db } = app.clients());
      [alice, bob] = await Promise.all([app.signIn('alice@example.com'), app.signIn('bob@example.com')]);
    },
  },
);

const createChat = async (token: string, body: Record<string, unknown> = { type: 'text' }) => {
  const res = await app.request('POST', '/chat', { token, body });
  expect(res.status).toBe(201);
  return res.body.data;
};

const partitionItems = async (chatId: string) =>
  (
    await db.send(
      new QueryCommand({
        TableName: app.tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': `CHAT#${chatId}` },
        ConsistentRead: true,
      }),
    )
  ).Items ?? [];

describe('POST /chat', () => {
  test('creates a chat with the defaults and returns only API fields', async () => {
    const res = await app.request('POST', '/chat', { token: alice.token, body: { type: 'text' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ success: true, statusCode: 201 });
    const chat = res.body.data;
    expect(chat).toEqual({
      id: expect.stringMatching(/^[a-z][a-z0-9]{23}$/),
      userId: alice.user.id,
      chatName: DEFAULT_CHAT_NAME,
      systemMessage: DEFAULT_SYSTEM_MESSAGE,
      createdAt: expect.any(String),
      updatedAt: chat.createdAt,
      status: 'active',
      type: 'text',
    });
    expect(new Date(chat.createdAt).toISOString()).toBe(chat.createdAt);
  });

  test('takes a name and a system message', async () => {
    const chat = await createChat(alice.token, { name: '  Trip plans ', type: 'file', systemMessage: 'Be brief.' });
    expect(chat).toMatchObject({ chatName: 'Trip plans', type: 'file', systemMessage: 'Be brief.' });
  });

  test.each([
    [{}, 'body.type'],
    [{ type: 'video' }, 'body.type'],
    [{ type: 'text', name: '' }, 'body.name'],
    [{ type: 'text', colour: 'red' }, 'body'],
  ])('refuses %j with 400 naming %s', async (body, path) => {
    const res = await app.request('POST', '/chat', { token: alice.token, body });
    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
  });

  test('requires a service token', async () => {
    const res = await app.request('POST', '/chat', { body: { type: 'text' } });
    expect(res.status).toBe(401);
  });
});

describe('GET /chat', () => {
  test("lists only the caller's chats, newest first, paged with x-next-cursor", async () => {
    const carol = await app.signIn('carol@example.com');
    const created = [];
    for (const name of ['one', 'two', 'three']) created.push(await createChat(carol.token, { name, type: 'text' }));
    await createChat(bob.token, { name: 'not carol', type: 'text' });

    const first = await app.request('GET', '/chat?limit=2', { token: carol.token });
    expect(first.status).toBe(200);
    expect(first.body.data.map((c: any) => c.chatName)).toEqual(['three', 'two']);
    const cursor = first.headers.get('x-next-cursor');
    expect(cursor).toBeTruthy();

    const second = await app.request('GET', `/chat?limit=2&cursor=${cursor}`, { token: carol.token });
    expect(second.status).toBe(200);
    expect(second.body.data.map((c: any) => c.chatName)).toEqual(['one']);
    expect(second.headers.get('x-next-cursor')).toBeNull();

    const all = await app.request('GET', '/chat', { token: carol.token });
    expect(all.body.data.map((c: any) => c.id)).toEqual(created.map((c) => c.id).reverse());
    expect(all.body.data[0]).not.toHaveProperty('PK');
    expect(all.body.data[0]).not.toHaveProperty('messageCount');

    // Carol's cursor is not Bob's to use, and garbage is a 400.
    expect((await app.request('GET', `/chat?cursor=${cursor}`, { token: bob.token })).status).toBe(400);
    expect((await app.request('GET', '/chat?cursor=not-a-cursor', { token: carol.token })).status).toBe(400);
    expect((await app.request('GET', '/chat?limit=0', { token: carol.token })).status).toBe(400);
  });
});

describe('PUT /chat/{chatId}', () => {
  test('renames, changes the system message and deactivates/reactivates', async () => {
    const chat = await createChat(alice.token);
    const renamed = await app.request('PUT', `/chat/${chat.id}`, {
      token: alice.token,
      body: { name: 'Renamed', systemMessage: 'Talk like a pirate.' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({
      id: chat.id,
      chatName: 'Renamed',
      systemMessage: 'Talk like a pirate.',
      status: 'active',
    });
    expect(renamed.body.data.updatedAt >= chat.updatedAt).toBe(true);

    const off = await app.request('PUT', `/chat/${chat.id}`, { token: alice.token, body: { status: 'deactivated' } });
    expect(off.body.data.status).toBe('deactivated');
    const hello = (stream: boolean) =>
      app.request('POST', '/message/logged-in', {
        token: alice.token,
        body: { chatId: chat.id, prompt: 'hello?', stream },
      });
    const refused = await hello(false);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/deactivated/);
    const refusedStream = await hello(true);
    expect(refusedStream.status).toBe(400);
    expect(refusedStream.headers.get('content-type')).toMatch(/application\/json/);

    const on = await app.request('PUT', `/chat/${chat.id}`, { token: alice.token, body: { status: 'active' } });
    expect(on.body.data.status).toBe('active');
    const accepted = await hello(false);
    expect(accepted.status).toBe(200);
    // The refused prompts were not stored.
    const history = await app.request('GET', `/chat/${chat.id}/messages`, { token: alice.token });
    expect(history.body.data.map((m: any) => m.sequenceNumber)).toEqual([1, 2]);
  });

  test.each([[{}], [{ status: 'archived' }], [{ name: 'x', extra: 1 }]])('refuses %j with 400', async (body) => {
    const chat = await createChat(alice.token);
    expect((await app.request('PUT', `/chat/${chat.id}`, { token: alice.token, body })).status).toBe(400);
  });

  test('an id that is not a CUID is a 400, an unknown one a 404', async () => {
    expect((await app.request('PUT', '/chat/nope', { token: alice.token, body: { name: 'x' } })).status).toBe(400);
    expect(
      (await app.request('PUT', '/chat/zzzzzzzzzzzzzzzzzzzzzzzz', { token: alice.token, body: { name: 'x' } })).status,
    ).toBe(404);
  });
});

describe("a stranger's chat", () => {
  test('answers 404 on every chat route and 403 on POST /message/logged-in; nothing changes', async () => {
    const chat = await createChat(alice.token, { name: 'private', type: 'text' });
    const asBob = { token: bob.token };
    expect((await app.request('GET', `/chat/${chat.id}/messages`, asBob)).status).toBe(404);
    expect((await app.request('PUT', `/chat/${chat.id}`, { ...asBob, body: { name: 'mine now' } })).status).toBe(404);
    expect((await app.request('DELETE', `/chat/${chat.id}`, asBob)).status).toBe(404);
    const send = await app.request('POST', '/message/logged-in', { ...asBob, body: { chatId: chat.id, prompt: 'hi' } });
    expect(send.status).toBe(403);
    const sendStream = await app.request('POST', '/message/logged-in', {
      ...asBob,
      body: { chatId: chat.id, prompt: 'hi', stream: true },
    });
    expect(sendStream.status).toBe(403);
    expect((await app.request('GET', '/chat', asBob)).body.data.map((c: any) => c.id)).not.toContain(chat.id);

    const mine = await app.request('GET', `/chat/${chat.id}/messages`, { token: alice.token });
    expect(mine.status).toBe(200);
    expect(mine.body.data).toEqual([]);
    expect(
      (await app.request('GET', '/chat', { token: alice.token })).body.data.find((c: any) => c.id === chat.id).chatName,
    ).toBe('private');
  });

  test('an unknown chat is 404 on POST /message/logged-in', async () => {
    const res = await app.request('POST', '/message/logged-in', {
      token: alice.token,
      body: { chatId: 'zzzzzzzzzzzzzzzzzzzzzzzz', prompt: 'hi' },
    });
    expect(res.status).toBe(404);
  });
});

describe('GET /chat/{chatId}/messages', () => {
  test('pages the messages in sequence order', async () => {
    const chat = await createChat(alice.token);
    for (let i = 1; i <= 5; i++) {
      await appendMessage(db, app.tableName, {
        chatId: chat.id,
        userId: alice.user.id,
        message: `m${i}`,
        messageType: 'user',
        type: 'message',
        timestamp: new Date().toISOString(),
      });
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: any = await app.request(
        'GET',
        `/chat/${chat.id}/messages?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        { token: alice.token },
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((m: any) => m.message));
      cursor = res.headers.get('x-next-cursor');
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    expect(pages).toBeGreaterThanOrEqual(3);

    const one = await app.request('GET', `/chat/${chat.id}/messages?limit=1`, { token: alice.token });
    expect(one.body.data[0]).toEqual({
      id: expect.stringMatching(/^[a-z][a-z0-9]{23}$/),
      chatId: chat.id,
      userId: alice.user.id,
      message: 'm1',
      messageType: 'user',
      type: 'message',
      sequenceNumber: 1,
      timestamp: expect.any(String),
      parentId: null,
      siblingIds: [one.body.data[0].id],
    });
    // A cursor of this chat does not open another one.
    const other = await createChat(alice.token);
    const foreign = await app.request('GET', `/chat/${other.id}/messages?cursor=${one.headers.get('x-next-cursor')}`, {
      token: alice.token,
    });
    expect(foreign.status).toBe(400);
  });
});

describe('DELETE /chat/{chatId}', () => {
  test('removes the chat, every message and attachment item, leaving nothing behind', async () => {
    const chat = await createChat(alice.token, { type: 'file' });
    // More items than one BatchWriteItem call takes (25), and a file attachment item.
    for (let i = 0; i < 30; i++) {
      await appendMessage(db, app.tableName, {
        chatId: chat.id,
        userId: alice.user.id,
        message: `m${i}`,
        messageType: i % 2 ? 'ai' : 'user',
        type: 'message',
        timestamp: new Date().toISOString(),
      });
    }
    await db.send(
      new PutCommand({ TableName: app.tableName, Item: { PK: `CHAT#${chat.id}`, SK: 'FILE#abc', fileId: 'abc' } }),
    );
    const other = await createChat(alice.token);
    await appendMessage(db, app.tableName, {
      chatId: other.id,
      userId: alice.user.id,
      message: 'keep me',
      messageType: 'user',
      type: 'message',
      timestamp: new Date().toISOString(),
    });
    // The chat, 30 messages and the pointer that finds each by id, the attachment.
    expect(await partitionItems(chat.id)).toHaveLength(62);

    const res = await app.request('DELETE', `/chat/${chat.id}`, { token: alice.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ id: chat.id, deleted: true });
    expect(await partitionItems(chat.id)).toEqual([]);
    expect((await app.request('GET', `/chat/${chat.id}/messages`, { token: alice.token })).status).toBe(404);
    expect((await app.request('DELETE', `/chat/${chat.id}`, { token: alice.token })).status).toBe(404);
    expect((await app.request('GET', '/chat', { token: alice.token })).body.data.map((c: any) => c.id)).not.toContain(
      chat.id,
    );
    // Another chat is untouched (its item, its message and the message's pointer).
    expect(await partitionItems(other.id)).toHaveLength(3);
  });

  test('a message appended to a deleted chat is refused', async () => {
    const chat = await createChat(alice.token);
    await app.request('DELETE', `/chat/${chat.id}`, { token: alice.token });
    await expect(
      appendMessage(db, app.tableName, {
        chatId: chat.id,
        userId: alice.user.id,
        message: 'late',
        messageType: 'user',
        type: 'file',
        timestamp: new Date().toISOString(),
      }),
    ).rejects.toBeInstanceOf(NotFoundError);
    expect(await partitionItems(chat.id)).toEqual([]);
  });
});

describe('the offline provider (no OPENAI_API_KEY)', () => {
  test('a text chat says plainly that no language model is configured and how to set one, both ways', async () => {
    const chat = await createChat(alice.token);
    const whole = await app.request('POST', '/message/logged-in', {
      token: alice.token,
      body: { chatId: chat.id, prompt: 'What is the capital of France?' },
    });
    expect(whole.status).toBe(200);
    expect(whole.body.data.response).toMatch(/No language model is configured/);
    expect(whole.body.data.response).toMatch(/OPENAI_API_KEY/);
    expect(whole.body.data.response).not.toMatch(/Paris/);
    expect(whole.body.data.usage).toEqual({
      promptTokens: expect.any(Number),
      completionTokens: expect.any(Number),
      totalTokens: expect.any(Number),
    });

    const streamed = await postSse(`${app.url}/message/logged-in`, alice.token, {
      chatId: chat.id,
      prompt: 'And of Spain?',
      stream: true,
    });
    expect(streamed.status).toBe(200);
    expect(streamed.deltas().length).toBeGreaterThan(1);
    expect(streamed.deltas().join('')).toBe(whole.body.data.response);
    expect(streamed.named('usage')).toHaveLength(1);
    expect(streamed.last()).toBe('[DONE]');

    const history = await app.request('GET', `/chat/${chat.id}/messages`, { token: alice.token });
    expect(history.body.data.map((m: any) => [m.sequenceNumber, m.messageType])).toEqual([
      [1, 'user'],
      [2, 'ai'],
      [3, 'user'],
      [4, 'ai'],
    ]);
    expect(history.body.data[1].usage).toEqual(whole.body.data.usage);
  });

  test('a file chat without documents says it found nothing relevant, and cites no sources', async () => {
    const chat = await createChat(alice.token, { type: 'file' });
    const res = await app.request('POST', '/message/logged-in', {
      token: alice.token,
      body: { chatId: chat.id, prompt: 'What does the contract say about notice periods?' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data.response).toMatch(/Offline mode/);
    expect(res.body.data.response).toMatch(/found nothing relevant/);
    expect(res.body.data.sources).toEqual([]);

    const streamed = await postSse(`${app.url}/message/logged-in`, alice.token, {
      chatId: chat.id,
      prompt: 'Anything?',
      stream: true,
    });
    expect(streamed.named('sources')).toEqual([[]]);
    expect(streamed.events.slice(0, 2).map((e) => e.event)).toEqual(['start', 'sources']);
    expect(streamed.named('citations')).toEqual([{ cited: [] }]);
    expect(streamed.events.map((e) => e.event ?? 'data').slice(-3)).toEqual(['citations', 'usage', 'data']);
    expect(streamed.last()).toBe('[DONE]');
  });

  test('validates the prompt: required, not blank, within PROMPT_MAX_CHARS; chatId a CUID', async () => {
    const chat = await createChat(alice.token);
    const cases: [Record<string, unknown>, string][] = [
      [{ chatId: chat.id }, 'body.prompt'],
      [{ chatId: chat.id, prompt: '   ' }, 'body.prompt'],
      [{ chatId: chat.id, prompt: 'x'.repeat(app.config.PROMPT_MAX_CHARS + 1) }, 'body.prompt'],
      [{ prompt: 'hi' }, 'body.chatId'],
      [{ chatId: 'abc', prompt: 'hi' }, 'body.chatId'],
      [{ chatId: chat.id, prompt: 'hi', stream: 'yes' }, 'body.stream'],
    ];
    for (const [body, path] of cases) {
      const res = await app.request('POST', '/message/logged-in', { token: alice.token, body });
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    expect((await app.request('GET', `/chat/${chat.id}/messages`, { token: alice.token })).body.data).toEqual([]);
  });
  test('a file chat with a PDF answers with the best-matching passages and their pages, labelled offline', async () => {
    app.pdfs.serve('/animals.pdf', { body: Buffer.from(await makeTextPdf(3, 8)) });
    const chat = await createChat(alice.token, { name: 'animals', type: 'file' });
    const upload = await app.request('POST', '/upload', {
      token: alice.token,
      body: { fileName: 'animals.pdf', contentType: 'application/pdf', size: 5000 },
    });
    const ingested = await app.request('POST', '/message/pdf', {
      token: alice.token,
      body: { url: `${app.pdfs.url}/animals.pdf`, fileId: upload.body.data.fileId, chatId: chat.id },
    });
    expect(ingested.body.data.embeddingsData.status).toBe('completed');

    const sentence = knownSentence(2, 4);
    const res = await app.request('POST', '/message/logged-in', {
      token: alice.token,
      body: { chatId: chat.id, prompt: sentence },
    });
    expect(res.status).toBe(200);
    const { response, sources } = res.body.data;
    expect(response).toMatch(/^\[Offline mode/);
    expect(response).toContain('[1] animals.pdf, page 2');
    expect(sources[0].cited).toBe(true);
    expect(response).toContain(sources[0].quote.replace(/\s+/g, ' ').trim());
    expect(sources[0]).toMatchObject({ fileId: upload.body.data.fileId, page: 2 });
  });
});
