import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { erasureDeps } from '#test/helpers/erasure-deps.ts';
import { knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';
import { until } from '#test/helpers/until.ts';
import { backfillCreatedIndex } from '#shared/created-index.ts';
import { sweepExpired } from '#shared/erasure/retention.ts';
import { UserRepository } from '#shared/users/user-repository.ts';

// RETENTION_DAYS: the sweep (given `now`) deletes the chats and files created before the cutoff
// with the routes' delete code, and keeps the newer ones; `npm start` runs the sweep on an
// interval through the data-sweep function.

const DAY_MS = 24 * 3600 * 1000;
let app: TestApp;
let token: string;
let pdf: Uint8Array;

beforeAll(async () => {
  pdf = await makeTextPdf(1, 4);
  app = await startTestApp({ env: { RETENTION_DAYS: '30', SWEEP_INTERVAL_SECONDS: '1' } });
  ({ token } = await app.signIn('keeper@example.com'));
});
afterAll(() => app?.stop());

/** A chat with a message and an uploaded file (its object put): their ids. */
async function chatAndFile(name: string) {
  const chat = (await app.request('POST', '/chat', { token, body: { name, type: 'text' } })).body.data;
  const sent = await app.request('POST', '/message/logged-in', { token, body: { chatId: chat.id, prompt: name } });
  expect(sent.status).toBe(200);
  const upload = (
    await app.request('POST', '/upload', {
      token,
      body: { fileName: `${name}.pdf`, contentType: 'application/pdf', size: pdf.byteLength },
    })
  ).body.data;
  expect((await fetch(upload.uploadUrl, { method: 'PUT', headers: upload.uploadHeaders, body: pdf })).status).toBe(200);
  return { chatId: chat.id as string, fileId: upload.fileId as string };
}

const listed = async (path: string) =>
  ((await app.request('GET', path, { token })).body.data as { id?: string; fileId?: string }[]).map(
    (x) => x.id ?? x.fileId,
  );

async function objectKeys(): Promise<string[]> {
  const out = await app.clients().s3.send(new ListObjectsV2Command({ Bucket: app.bucket }));
  return (out.Contents ?? []).map((o) => o.Key!);
}

test('a sweep 30 days on deletes the chats and files created before the cutoff and keeps the newer ones', async () => {
  const old = await chatAndFile('old');
  const cutoff = new Date();
  const fresh = await chatAndFile('fresh');
  const deps = erasureDeps(app);

  // A day before the old ones are due, nothing goes.
  const early = new Date(cutoff.getTime() + 29 * DAY_MS);
  expect(await sweepExpired(deps, { retentionDays: 30 }, early)).toEqual({ chats: 0, files: 0 });

  const due = new Date(cutoff.getTime() + 30 * DAY_MS);
  expect(await sweepExpired(deps, { retentionDays: 30 }, due)).toEqual({ chats: 1, files: 1 });
  expect(await listed('/chat')).toEqual([fresh.chatId]);
  expect(await listed('/upload')).toEqual([fresh.fileId]);
  expect((await app.request('GET', `/chat/${old.chatId}/messages`, { token })).status).toBe(404);
  const keys = await objectKeys();
  expect(keys.some((k) => k.includes(old.fileId))).toBe(false);
  expect(keys.some((k) => k.includes(fresh.fileId))).toBe(true);
  // Its record went with its objects.
  const { Item: record } = await app
    .clients()
    .db.send(new GetCommand({ TableName: app.tableName, Key: { PK: `FILE#${old.fileId}`, SK: 'META' } }));
  expect(record).toBeUndefined();

  // Retention off: the same sweep deletes nothing, however late.
  expect(await sweepExpired(deps, { retentionDays: 0 }, new Date(due.getTime() + 365 * DAY_MS))).toEqual({
    chats: 0,
    files: 0,
  });
  expect(await listed('/chat')).toEqual([fresh.chatId]);
});

test('npm start runs the sweep on its interval: an erasure left unfinished is finished by it', async () => {
  const { user } = await app.signIn('left@example.com');
  const users = new UserRepository(app.clients().db, app.tableName);
  expect(await users.markErasing(user.id, new Date().toISOString())).toBeDefined();
  // Nothing else erases it: the data-sweep function, run by the local runtime, does.
  await until(
    'the sweep to finish the erasure',
    () =>
      app
        .clients()
        .db.send(new GetCommand({ TableName: app.tableName, Key: { PK: `USER#${user.id}`, SK: 'PROFILE' } })),
    (out) => out.Item === undefined,
  );
  const again = await app.signIn('left@example.com');
  expect(again.user.id).not.toBe(user.id);
});

test('chats and files stored before the creation index are given its keys by the sweep, and then expire', async () => {
  const before = await chatAndFile('stored-before');
  const { db } = app.clients();
  // As an item written before the index existed: no GSI3 keys, and a backfill not yet run.
  for (const PK of [`CHAT#${before.chatId}`, `FILE#${before.fileId}`])
    await db.send(
      new UpdateCommand({
        TableName: app.tableName,
        Key: { PK, SK: 'META' },
        UpdateExpression: 'REMOVE GSI3PK, GSI3SK',
      }),
    );
  await db.send(new DeleteCommand({ TableName: app.tableName, Key: { PK: 'SWEEP#CREATED-INDEX', SK: 'BACKFILL' } }));

  await sweepExpired(erasureDeps(app), { retentionDays: 30 }, new Date(Date.now() + 31 * DAY_MS));
  expect(await listed('/chat')).not.toContain(before.chatId);
  expect(await listed('/upload')).not.toContain(before.fileId);
  expect(await backfillCreatedIndex(db, app.tableName)).toBe(0); // done: one GetItem a sweep from now on
});

test('a file that expires is no longer shown by the share of a newer chat that cites it', async () => {
  const { token: own } = await app.signIn('sharer@example.com');
  const upload = (
    await app.request('POST', '/upload', {
      token: own,
      body: { fileName: 'expiring-source.pdf', contentType: 'application/pdf', size: pdf.byteLength },
    })
  ).body.data;
  expect((await fetch(upload.uploadUrl, { method: 'PUT', headers: upload.uploadHeaders, body: pdf })).status).toBe(200);
  const cutoff = new Date();
  // The chat is newer than the cutoff: it stays; the file is older: it goes.
  const chat = (await app.request('POST', '/chat', { token: own, body: { name: 'kept', type: 'file' } })).body.data;
  const ingested = await app.request('POST', '/message/pdf', {
    token: own,
    body: { url: upload.downloadUrl, fileId: upload.fileId, chatId: chat.id },
  });
  expect(ingested.body.data.embeddingsData.status).toBe('completed');
  const prompt = knownSentence(1, 2).split(' ').slice(0, 6).join(' ');
  expect(
    (await app.request('POST', '/message/logged-in', { token: own, body: { chatId: chat.id, prompt } })).status,
  ).toBe(200);
  const { url } = (await app.request('POST', `/chat/${chat.id}/share`, { token: own })).body.data;
  const before = await fetch(url).then((r) => r.json() as Promise<any>);
  const quotes: string[] = before.data.messages.flatMap((m: any) => (m.citations ?? []).map((c: any) => c.quote));
  expect(quotes.length).toBeGreaterThan(0);

  await sweepExpired(erasureDeps(app), { retentionDays: 30 }, new Date(cutoff.getTime() + 30 * DAY_MS));
  expect((await app.request('GET', `/message/pdf/${upload.fileId}`, { token: own })).status).toBe(404);
  const after = await fetch(url);
  expect(after.status).toBe(200); // the chat and its share stay
  const text = await after.text();
  expect(text).not.toContain('expiring-source');
  for (const quote of quotes) expect(text).not.toContain(quote);
  const reply = JSON.parse(text).data.messages.find((m: any) => m.role === 'assistant');
  expect(reply.citations.every((c: any) => c.deleted === true)).toBe(true);
});
