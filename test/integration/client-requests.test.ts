import { createId } from '#shared/ids.ts';
import { AttachmentRepository } from '#shared/files/attachment-repository.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import { storedMessages } from '#test/helpers/stored-messages.ts';
import { useTestApp } from '#test/helpers/app.ts';
import { knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';
import { postSse } from '#test/helpers/sse.ts';

// What client developers asked for, each over real HTTP against the emulators.

let alice: { token: string; user: any };
let bob: { token: string; user: any };
const app = useTestApp(async () => ({ pdfs: { '/three.pdf': { body: Buffer.from(await makeTextPdf(3, 6)) } } }), {
  ready: async (app) => {
    [alice, bob] = await Promise.all([app.signIn('alice-clients@example.com'), app.signIn('bob-clients@example.com')]);
  },
});

const createChat = async (token: string, body: Record<string, unknown> = { type: 'text' }) => {
  const res = await app.request('POST', '/chat', { token, body });
  expect(res.status).toBe(201);
  return res.body.data;
};
const upload = async (token: string, fileName = 'three.pdf') => {
  const res = await app.request('POST', '/upload', {
    token,
    body: { fileName, contentType: 'application/pdf', size: 5000 },
  });
  expect(res.status).toBe(201);
  return res.body.data.fileId as string;
};

describe('GET /chat/{chatId}', () => {
  test('answers the chat with its attached files and their status; 404 to a stranger', async () => {
    const chat = await createChat(alice.token, { type: 'file', name: 'Reading' });
    const fileId = await upload(alice.token);
    const ingested = await app.request('POST', '/message/pdf', {
      token: alice.token,
      body: { url: `${app.pdfs.url}/three.pdf`, fileId, chatId: chat.id },
    });
    expect(ingested.status).toBe(200);

    const res = await app.request('GET', `/chat/${chat.id}`, { token: alice.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      ...chat,
      updatedAt: expect.any(String),
      activeLeafId: expect.any(String), // the attachment message, the chat's newest
      files: [
        expect.objectContaining({ fileId, fileName: 'three.pdf', status: 'completed', pages: 3, chatIds: [chat.id] }),
      ],
    });
    expect((await app.request('GET', `/chat/${chat.id}`, { token: bob.token })).status).toBe(404);
    expect((await app.request('GET', `/chat/${createId()}`, { token: alice.token })).status).toBe(404);
  });

  test('a text chat has no files', async () => {
    const chat = await createChat(alice.token);
    const res = await app.request('GET', `/chat/${chat.id}`, { token: alice.token });
    expect(res.body.data).toEqual({ ...chat, files: [] });
  });
});

describe('GET /upload', () => {
  test("lists the caller's files, newest first, paged with x-next-cursor; never another user's", async () => {
    const { token } = await app.signIn('carol-clients@example.com');
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await upload(token, `f${i}.pdf`));
    await upload(bob.token, 'bobs.pdf');

    const first = await app.request('GET', '/upload?limit=2', { token });
    expect(first.status).toBe(200);
    expect(first.body.data.map((f: any) => f.fileId)).toEqual([ids[2], ids[1]]);
    expect(first.body.data[0]).toMatchObject({ fileName: 'f2.pdf', status: 'uploaded', size: 5000 });
    const cursor = first.headers.get('x-next-cursor');
    expect(cursor).toBeTruthy();
    const second = await app.request('GET', `/upload?limit=2&cursor=${cursor}`, { token });
    expect(second.body.data.map((f: any) => f.fileId)).toEqual([ids[0]]);
    expect(second.headers.get('x-next-cursor')).toBeNull();
    // Bob's cursor is not Carol's.
    const bobs = await app.request('GET', '/upload?limit=1', { token: bob.token });
    expect(
      (await app.request('GET', `/upload?cursor=${bobs.headers.get('x-next-cursor') ?? cursor}`, { token: bob.token }))
        .status,
    ).toBe(400);
  });
});

describe('lists whose last page is full', () => {
  test('answer no cursor (GET /chat, GET /chat/{id}/messages, GET /upload)', async () => {
    const { token } = await app.signIn('dave-clients@example.com');
    for (let i = 0; i < 4; i++) await createChat(token);
    await upload(token);
    await upload(token);
    const first = await app.request('GET', '/chat?limit=2', { token });
    const cursor = first.headers.get('x-next-cursor');
    expect(cursor).toBeTruthy();
    const last = await app.request('GET', `/chat?limit=2&cursor=${cursor}`, { token });
    expect(last.body.data).toHaveLength(2);
    expect(last.headers.get('x-next-cursor')).toBeNull();
    const exact = await app.request('GET', '/chat?limit=4', { token });
    expect(exact.body.data).toHaveLength(4);
    expect(exact.headers.get('x-next-cursor')).toBeNull();

    const files = await app.request('GET', '/upload?limit=2', { token });
    expect(files.body.data).toHaveLength(2);
    expect(files.headers.get('x-next-cursor')).toBeNull();

    const chat = await createChat(token);
    await app.request('POST', '/message/logged-in', { token, body: { chatId: chat.id, prompt: 'one' } });
    const messages = await app.request('GET', `/chat/${chat.id}/messages?limit=2`, { token });
    expect(messages.body.data).toHaveLength(2);
    expect(messages.headers.get('x-next-cursor')).toBeNull();
  });
});

describe('message ids in replies', () => {
  test('a streamed reply starts with event: start naming the stored prompt and the id the reply is stored under', async () => {
    const chat = await createChat(alice.token);
    const sse = await postSse(`${app.url}/message/logged-in`, alice.token, {
      chatId: chat.id,
      prompt: 'Hello there',
      stream: true,
    });
    expect(sse.status).toBe(200);
    expect(sse.events[0]!.event).toBe('start');
    const start = JSON.parse(sse.events[0]!.data);
    expect(sse.last()).toBe('[DONE]');
    const stored = (await app.request('GET', `/chat/${chat.id}/messages`, { token: alice.token })).body.data;
    expect(start).toEqual({
      chatId: chat.id,
      userMessageId: stored[0].id,
      userSequenceNumber: 1,
      messageId: stored[1].id,
    });
    expect(stored.map((m: any) => m.messageType)).toEqual(['user', 'ai']);
  });

  test('a whole reply returns its message id and the prompt it answers', async () => {
    const chat = await createChat(alice.token);
    const res = await app.request('POST', '/message/logged-in', {
      token: alice.token,
      body: { chatId: chat.id, prompt: 'Hi' },
    });
    const stored = (await app.request('GET', `/chat/${chat.id}/messages`, { token: alice.token })).body.data;
    expect(res.body.data).toMatchObject({ userMessageId: stored[0].id, messageId: stored[1].id, sequenceNumber: 2 });
  });

  test('parallel streamed prompts can be matched to their replies', async () => {
    const chat = await createChat(alice.token);
    const prompts = ['first prompt', 'second prompt', 'third prompt'];
    const streams = await Promise.all(
      prompts.map((prompt) =>
        postSse(`${app.url}/message/logged-in`, alice.token, { chatId: chat.id, prompt, stream: true }),
      ),
    );
    const byId = new Map((await storedMessages(app, chat.id)).map((m) => [m.id, m]));
    streams.forEach((sse, i) => {
      const start = JSON.parse(sse.events[0]!.data);
      expect(byId.get(start.userMessageId)?.message).toBe(prompts[i]);
      expect(byId.get(start.messageId)?.message).toBe(sse.deltas().join(''));
    });
  });
});

describe('PUT /chat/{chatId}', () => {
  const putChat = (chatId: string, body: object) => app.request('PUT', `/chat/${chatId}`, { token: alice.token, body });

  test('takes chatName as well as name', async () => {
    const chat = await createChat(alice.token);
    const res = await putChat(chat.id, { chatName: '  Renamed ' });
    expect(res.status).toBe(200);
    expect(res.body.data.chatName).toBe('Renamed');
    const both = await putChat(chat.id, { name: 'A', chatName: 'A' });
    expect(both.body.data.chatName).toBe('A');
  });

  test('refuses name and chatName that differ, and an empty chatName, with 400', async () => {
    const chat = await createChat(alice.token);
    const differ = await putChat(chat.id, { name: 'A', chatName: 'B' });
    expect(differ.status).toBe(400);
    expect(differ.body.errors.map((e: any) => e.path)).toContain('body.chatName');
    expect((await putChat(chat.id, { chatName: '' })).status).toBe(400);
  });
});

describe('a file chat whose PDF is still being processed', () => {
  test('answers 409 saying so (with the progress), stores nothing, then answers once the file is done', async () => {
    const chat = await createChat(alice.token, { type: 'file' });
    const { db } = app.clients();
    const files = new FileRepository(db, app.tableName);
    const attachments = new AttachmentRepository(db, app.tableName);
    const now = new Date().toISOString();
    const id = createId();
    // Arrange a file mid-extraction, attached to the chat, as the pipeline leaves it.
    await files.create({
      id,
      userId: alice.user.id,
      fileName: 'slow.pdf',
      contentType: 'application/pdf',
      size: 100,
      s3Key: `uploads/${id}`,
      status: 'uploaded',
      createdAt: now,
      updatedAt: now,
    });
    await files.startRun({
      id,
      userId: alice.user.id,
      runId: 'run-1',
      url: 'https://example.invalid/slow.pdf',
      force: false,
      now,
    });
    await files.recordDownload(id, 'run-1', { sha256: 'a'.repeat(64), size: 100 }, now);
    await files.recordPageProgress(id, 'run-1', { pagesTotal: 10, pagesDone: 4 }, now);
    await attachments.attach({
      chatId: chat.id,
      fileId: id,
      fileName: 'slow.pdf',
      userId: alice.user.id,
      attachedAt: now,
    });

    for (const stream of [false, true]) {
      const res = await app.request('POST', '/message/logged-in', {
        token: alice.token,
        body: { chatId: chat.id, prompt: 'What is it about?', stream },
      });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ success: false, statusCode: 409 });
      expect(res.body.message).toMatch(/still being processed.*"slow\.pdf" \(extracting text, page 4 of 10\)/);
    }
    expect((await app.request('GET', `/chat/${chat.id}/messages`, { token: alice.token })).body.data).toEqual([]);

    // The status shows the same progress.
    const status = await app.request('GET', `/message/pdf/${id}`, { token: alice.token });
    expect(status.body.data.embeddingsData.progress).toEqual({
      stage: 'extract',
      pages: { done: 4, total: 10 },
      parts: { done: 0 },
    });

    // Once a file of the chat is completed, prompts are answered from it.
    const fileId = await upload(alice.token);
    await app.request('POST', '/message/pdf', {
      token: alice.token,
      body: { url: `${app.pdfs.url}/three.pdf`, fileId, chatId: chat.id },
    });
    const ok = await app.request('POST', '/message/logged-in', {
      token: alice.token,
      body: { chatId: chat.id, prompt: knownSentence(2, 1) },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.data.sources[0]).toMatchObject({ fileId, page: 2 });
  });
});

describe('ingestion progress', () => {
  test('a completed file reports stage done, every page and every part', async () => {
    const fileId = await upload(alice.token);
    const res = await app.request('POST', '/message/pdf', {
      token: alice.token,
      body: { url: `${app.pdfs.url}/three.pdf`, fileId },
    });
    expect(res.status).toBe(200);
    const { progress } = (await app.request('GET', `/message/pdf/${fileId}`, { token: alice.token })).body.data
      .embeddingsData;
    expect(progress).toEqual({
      stage: 'done',
      pages: { done: 3, total: 3 },
      parts: { done: expect.any(Number), total: expect.any(Number) },
    });
    expect(progress.parts.done).toBe(progress.parts.total);
    expect(progress.parts.total).toBeGreaterThan(0);
  });

  test('an uploaded file has no progress yet', async () => {
    const fileId = await upload(alice.token);
    const data = (await app.request('GET', `/message/pdf/${fileId}`, { token: alice.token })).body.data.embeddingsData;
    expect(data.status).toBe('uploaded');
    expect(data).not.toHaveProperty('progress');
  });
});

describe('legacy CUIDs (version 1)', () => {
  const legacy = 'cjld2cjxh0000qzrmn831i7rn'; // 25 characters, starting with c

  test.each([
    ['GET', `/chat/${legacy}`],
    ['GET', `/chat/${legacy}/messages`],
    ['PUT', `/chat/${legacy}`],
    ['DELETE', `/chat/${legacy}`],
    ['GET', `/message/pdf/${legacy}`],
    ['DELETE', `/upload/${legacy}`],
  ])('%s %s answers 404, not 400', async (method, path) => {
    const res = await app.request(method, path, {
      token: alice.token,
      ...(method === 'PUT' && { body: { name: 'x' } }),
    });
    expect(res.status).toBe(404);
  });

  test('in a body: a prompt to an unknown legacy chat id is 404', async () => {
    const res = await app.request('POST', '/message/logged-in', {
      token: alice.token,
      body: { chatId: legacy, prompt: 'hi' },
    });
    expect(res.status).toBe(404);
  });

  test.each([
    'cjld2cjxh0000qzrmn831i7',
    'c-ld2cjxh0000qzrmn831i7rn',
    'Cjld2cjxh0000qzrmn831i7rn',
    'cjld2cjxh0000qzrmn831i7rn1',
    'xjld2cjxh0000qzrmn831i7rn',
  ])('%s is still a 400', async (bad) => {
    expect((await app.request('GET', `/chat/${bad}`, { token: alice.token })).status).toBe(400);
  });
});
