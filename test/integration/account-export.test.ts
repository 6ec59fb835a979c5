import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { buildPendingExports } from '#shared/account-export/account-export.ts';
import { runSweep } from '#shared/erasure/sweep.ts';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { accountExportDeps, erasureDeps } from '#test/helpers/erasure-deps.ts';
import { accountExportDepsOf } from '#shared/account-export/account-export-deps.ts';
import { knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';
import { uploadBytes } from '#test/helpers/files.ts';

// POST /me/export and GET /me/export/{exportId}: the sweep's build streams a ZIP of everything of
// the user's into the bucket; the archive is read back by an independent reader (python3's zipfile).

let app: TestApp;
let alice: { token: string; user: any };
let bob: { token: string; user: any };
let pdf: Uint8Array;
let dir: string;

beforeAll(async () => {
  pdf = await makeTextPdf(3, 8);
  app = await startTestApp({ env: { ADMIN_EMAILS: 'admin@example.com' } });
  [alice, bob] = await Promise.all([app.signIn('alice-export@example.com'), app.signIn('bob-export@example.com')]);
  dir = mkdtempSync(join(tmpdir(), 'account-export-'));
});
afterAll(async () => {
  await app?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const exportDeps = () => accountExportDeps(app);

/** Every entry of the ZIP as python3's zipfile reads it (after unzip tested it): text entries as text, PDFs as their sha256. */
function readZip(bytes: Buffer): Record<string, string> {
  const file = join(dir, `${createHash('sha256').update(bytes).digest('hex')}.zip`);
  writeFileSync(file, bytes);
  // Info-ZIP's unzip agrees the archive is whole (every CRC checked).
  expect(execFileSync('unzip', ['-tq', file], { encoding: 'utf8' })).toMatch(/No errors/);
  const script = [
    'import hashlib, json, sys, zipfile',
    'z = zipfile.ZipFile(sys.argv[1])',
    'assert z.testzip() is None',
    'out = {}',
    'for n in z.namelist():',
    '    b = z.read(n)',
    "    out[n] = hashlib.sha256(b).hexdigest() if n.endswith('.pdf') else b.decode('utf-8')",
    'print(json.dumps(out))',
  ].join('\n');
  return JSON.parse(execFileSync('python3', ['-c', script, file], { encoding: 'utf8', maxBuffer: 64 << 20 }));
}

/** A user's uploaded (and ingested) PDF in a file chat with a cited reply; its ids. */
async function fileChat(token: string) {
  const chat = (await app.request('POST', '/chat', { token, body: { name: 'Animals', type: 'file' } })).body.data;
  const upload = await uploadBytes(app, token, 'animals.pdf', pdf);
  const ingested = await app.request('POST', '/message/pdf', {
    token,
    body: { url: upload.downloadUrl, fileId: upload.fileId, chatId: chat.id },
  });
  expect(ingested.body.data.embeddingsData.status).toBe('completed');
  const sent = await app.request('POST', '/message/logged-in', {
    token,
    body: { chatId: chat.id, prompt: knownSentence(2, 3) },
  });
  expect(sent.status).toBe(200);
  return { chatId: chat.id as string, fileId: upload.fileId as string };
}

/** A text chat with two branches (an edit of the first prompt) and feedback on a reply. */
async function branchedChat(token: string) {
  const chatId = (await app.request('POST', '/chat', { token, body: { name: 'Branches', type: 'text' } })).body.data.id;
  const send = async (prompt: string, parentId?: null) =>
    (
      await app.request('POST', '/message/logged-in', {
        token,
        body: parentId === null ? { chatId, prompt, parentId } : { chatId, prompt },
      })
    ).body.data.messageId as string;
  await send('first branch prompt');
  await send('second branch prompt', null);
  const messages = (await app.request('GET', `/chat/${chatId}/messages?limit=100`, { token })).body.data as any[];
  const reply = messages.find((m) => m.messageType === 'ai');
  const rated = await app.request('PUT', `/chat/${chatId}/messages/${reply.id}/feedback`, {
    token,
    body: { rating: 'up' },
  });
  expect(rated.status).toBe(200);
  return { chatId: chatId as string, ratedReplyId: reply.id as string };
}

async function placeOrder(token: string) {
  const { token: admin } = await app.signIn('admin@example.com');
  const product = await app.request('POST', '/products', {
    token: admin,
    body: { name: 'Lamp', priceCents: 1250, currency: 'EUR' },
  });
  const order = await app.request('POST', '/orders', {
    token,
    body: { items: [{ productId: product.body.id, quantity: 2 }] },
  });
  expect(order.status).toBe(201);
  return order.body.id as string;
}

test('an export holds every chat (all branches as JSON, the active one as Markdown), citations, feedback, file records, the original PDF and orders', async () => {
  const { token } = alice;
  const file = await fileChat(token);
  const branched = await branchedChat(token);
  const orderId = await placeOrder(token);

  const created = await app.request('POST', '/me/export', { token });
  expect(created.status).toBe(202);
  const { exportId } = created.body.data;
  expect((await app.request('GET', `/me/export/${exportId}`, { token })).body.data).toEqual({ status: 'pending' });

  expect(await buildPendingExports(exportDeps())).toBe(1);
  // A second sweep finds nothing left to build.
  expect(await buildPendingExports(exportDeps())).toBe(0);

  const ready = await app.request('GET', `/me/export/${exportId}`, { token });
  expect(ready.status).toBe(200);
  expect(ready.body.data).toEqual({ status: 'ready', url: expect.any(String) });
  const download = await fetch(ready.body.data.url);
  expect(download.status).toBe(200);
  const bytes = Buffer.from(await download.arrayBuffer());
  const entries = readZip(bytes);

  expect(Object.keys(entries).sort()).toEqual(
    [
      `chats/${branched.chatId}.json`,
      `chats/${branched.chatId}.md`,
      `chats/${file.chatId}.json`,
      `chats/${file.chatId}.md`,
      'collections.json',
      'files.json',
      `files/${file.fileId}.pdf`,
      'orders.json',
    ].sort(),
  );
  expect(entries[`files/${file.fileId}.pdf`]).toBe(createHash('sha256').update(pdf).digest('hex'));

  // Both branches in the JSON; the Markdown shows the active one (the edit).
  const branchedJson = JSON.parse(entries[`chats/${branched.chatId}.json`]!);
  expect(branchedJson.chat).toMatchObject({ id: branched.chatId, name: 'Branches' });
  const prompts = branchedJson.messages.filter((m: any) => m.messageType === 'user').map((m: any) => m.message);
  expect(prompts).toEqual(['first branch prompt', 'second branch prompt']);
  expect(branchedJson.messages).toHaveLength(4);
  expect(branchedJson.messages.find((m: any) => m.id === branched.ratedReplyId).feedback).toMatchObject({
    rating: 'up',
  });
  expect(entries[`chats/${branched.chatId}.md`]).toContain('second branch prompt');
  expect(entries[`chats/${branched.chatId}.md`]).not.toContain('first branch prompt');

  const fileJson = JSON.parse(entries[`chats/${file.chatId}.json`]!);
  const cited = fileJson.messages.find((m: any) => m.citations?.length);
  expect(cited.citations[0]).toMatchObject({ fileName: 'animals.pdf', page: expect.any(Number) });
  expect(entries[`chats/${file.chatId}.md`]).toContain('**Sources**');

  expect(JSON.parse(entries['files.json']!)).toEqual([
    expect.objectContaining({ fileId: file.fileId, fileName: 'animals.pdf', status: 'completed' }),
  ]);
  expect(JSON.parse(entries['collections.json']!)).toEqual([]); // test/integration/collections.test.ts fills one
  expect(JSON.parse(entries['orders.json']!)).toEqual([
    expect.objectContaining({ id: orderId, items: [expect.objectContaining({ quantity: 2 })] }),
  ]);
  // Nothing of another user's.
  expect(Object.values(entries).join('\n')).not.toContain(bob.user.id);
});

test('another user’s export and an unknown one are 404; a malformed id is 400', async () => {
  const { exportId } = (await app.request('POST', '/me/export', { token: alice.token })).body.data;
  const stranger = await app.request('GET', `/me/export/${exportId}`, { token: bob.token });
  expect(stranger.status).toBe(404);
  const unknown = await app.request('GET', '/me/export/e2x7p4o9r1t6s3a8b5c0d2fg', { token: alice.token });
  expect(unknown.status).toBe(404);
  expect((await app.request('GET', '/me/export/not-an-id', { token: alice.token })).status).toBe(400);
  expect((await app.request('POST', '/me/export')).status).toBe(401);
});

test('the sweep builds exports; an erasure deletes the user’s export jobs and ZIPs', async () => {
  const carol = await app.signIn('carol-export@example.com');
  await app.request('POST', '/chat', { token: carol.token, body: { name: 'Hello', type: 'text' } });
  const { exportId } = (await app.request('POST', '/me/export', { token: carol.token })).body.data;
  const swept = await runSweep({ ...erasureDeps(app), exports: exportDeps() }, { retentionDays: 0 });
  expect(swept.exports).toBeGreaterThanOrEqual(1);
  expect((await app.request('GET', `/me/export/${exportId}`, { token: carol.token })).body.data.status).toBe('ready');
  const objects = async () =>
    ((await app.clients().s3.send(new ListObjectsV2Command({ Bucket: app.bucket, Prefix: 'exports/' }))).Contents ?? [])
      .map((o) => o.Key!)
      .filter((k) => k.startsWith(`exports/${carol.user.id}/`));
  expect(await objects()).toEqual([`exports/${carol.user.id}/${exportId}.zip`]);

  expect((await app.request('DELETE', '/me', { token: carol.token })).status).toBe(202);
  expect(await objects()).toEqual([]);
});

test('a build that died is taken again once its lease has run out, not before', async () => {
  const { exportId } = (await app.request('POST', '/me/export', { token: alice.token })).body.data;
  const { db, s3 } = app.clients();
  const at = (ms: number) =>
    accountExportDepsOf({ db, s3, table: app.tableName, bucket: app.bucket }, () => new Date(Date.now() + ms));
  // A build takes the job and dies (its lease taken, nothing written).
  const deps = at(0);
  let job: Awaited<ReturnType<typeof deps.exports.get>>;
  for await (const waiting of deps.exports.toBuild()) if (waiting.id === exportId) job = waiting;
  const now = new Date();
  expect(
    await deps.exports.lease(job!, now.toISOString(), new Date(now.getTime() + 5 * 60_000).toISOString()),
  ).toMatchObject({ status: 'building', attempts: 1 });
  const state = async () => (await app.request('GET', `/me/export/${exportId}`, { token: alice.token })).body.data;

  // Within the lease another sweep leaves it alone.
  await buildPendingExports(at(60_000));
  expect(await state()).toEqual({ status: 'building' });
  // After it, the next sweep builds it.
  await buildPendingExports(at(6 * 60_000));
  expect(await state()).toEqual({ status: 'ready', url: expect.any(String) });
  expect((await deps.exports.get(alice.user.id, exportId))?.attempts).toBe(2);
});

test('a build that fails is tried again by later sweeps, then the export is failed; no ZIP is left of it', async () => {
  const erin = await app.signIn('erin-export@example.com');
  await app.request('POST', '/chat', { token: erin.token, body: { name: 'Hello', type: 'text' } });
  const { exportId } = (await app.request('POST', '/me/export', { token: erin.token })).body.data;
  const { db, s3 } = app.clients();
  // Every read of a chat fails (a store in trouble), later and later: each sweep after the last lease.
  const failingAt = (minutes: number) => {
    const deps = accountExportDepsOf(
      { db, s3, table: app.tableName, bucket: app.bucket },
      () => new Date(Date.now() + minutes * 60_000),
    );
    deps.chats.getOwned = () => Promise.reject(new Error('the store is down'));
    return deps;
  };
  const state = async () => (await app.request('GET', `/me/export/${exportId}`, { token: erin.token })).body.data;

  expect(await buildPendingExports(failingAt(0))).toBe(0);
  expect(await state()).toEqual({ status: 'building' });
  expect(await buildPendingExports(failingAt(6))).toBe(0);
  expect(await state()).toEqual({ status: 'building' });
  expect(await buildPendingExports(failingAt(12))).toBe(0);
  expect(await state()).toEqual({ status: 'failed' });
  // Out of the sweep's work: a sweep that could build it finds nothing.
  expect(await buildPendingExports(exportDeps())).toBe(0);
  const keys = (
    (await s3.send(new ListObjectsV2Command({ Bucket: app.bucket, Prefix: `exports/${erin.user.id}/` }))).Contents ?? []
  ).map((o) => o.Key);
  expect(keys).toEqual([]);
});
