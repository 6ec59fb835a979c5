import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { makeTextPdf } from '#test/helpers/make-pdf.ts';
import { postSse } from '#test/helpers/sse.ts';
import { until } from '#test/helpers/until.ts';
import { accountExportDeps, erasureDeps } from '#test/helpers/erasure-deps.ts';
import { buildPendingExports } from '#shared/account-export/account-export.ts';
import { ChatRepository } from '#shared/chats/conversations/chat-repository.ts';
import { eraseUser, requestErasure, resumeErasures, tombstoneUserId } from '#shared/erasure/erasure.ts';
import { UserRepository } from '#shared/users/user-repository.ts';

// DELETE /me through the gateway: a user with every kind of data is erased; the table and the
// bucket are listed whole afterwards, and only the tombstoned order is left of them. An erasure
// that dies half-way is finished by the sweep.

let app: TestApp;
let admin: string;
let productId: string;
let pdf: Uint8Array;

beforeAll(async () => {
  pdf = await makeTextPdf(3, 8);
  // The periodic sweep is off (the helper's default): this suite runs it itself, after interrupting an erasure.
  app = await startTestApp({
    pdfs: { '/doc.pdf': { body: Buffer.from(pdf) } },
    env: { ADMIN_EMAILS: 'admin@example.com' },
  });
  admin = (await app.signIn('admin@example.com')).token;
  const product = await app.request('POST', '/products', {
    token: admin,
    body: { name: 'Lamp', priceCents: 1250, currency: 'EUR' },
  });
  productId = product.body.id;
});
afterAll(() => app?.stop());

/** A user with chats, messages (whole and streamed), a share, feedback, an ingested PDF, an upload and an order. */
async function populatedUser(email: string) {
  const { token, user } = await app.signIn(email);
  const call = (method: string, path: string, body?: unknown) =>
    app.request(method, path, { token, ...(body !== undefined && { body }) });
  const fileChat = (await call('POST', '/chat', { name: 'Alpha file chat', type: 'file' })).body.data.id;
  const textChat = (await call('POST', '/chat', { name: 'Bravo notes', type: 'text' })).body.data.id;
  const ingestedUpload = await call('POST', '/upload', {
    fileName: 'doc.pdf',
    contentType: 'application/pdf',
    size: pdf.byteLength,
  });
  const ingestedId = ingestedUpload.body.data.fileId;
  const ingested = await call('POST', '/message/pdf', {
    url: `${app.pdfs.url}/doc.pdf`,
    fileId: ingestedId,
    chatId: fileChat,
  });
  expect(ingested.body.data.embeddingsData.status).toBe('completed');
  const whole = await call('POST', '/message/logged-in', { chatId: fileChat, prompt: 'What does the document say?' });
  expect(whole.status).toBe(200);
  const streamed = await postSse(`${app.url}/message/logged-in`, token, {
    chatId: textChat,
    prompt: 'Tell me something',
    stream: true,
  });
  expect(streamed.status).toBe(200);
  const feedback = await call('PUT', `/chat/${fileChat}/messages/${whole.body.data.messageId}/feedback`, {
    rating: 'up',
  });
  expect(feedback.status).toBe(200);
  const share = await call('POST', `/chat/${textChat}/share`);
  expect(share.status).toBe(201);
  const upload = (
    await call('POST', '/upload', { fileName: 'kept.pdf', contentType: 'application/pdf', size: pdf.byteLength })
  ).body.data;
  expect((await fetch(upload.uploadUrl, { method: 'PUT', headers: upload.uploadHeaders, body: pdf })).status).toBe(200);
  const order = await call('POST', '/orders', { items: [{ productId, quantity: 2 }] });
  expect(order.status).toBe(201);
  // An account export, built (its job item and its ZIP under exports/).
  const { exportId } = (await call('POST', '/me/export')).body.data;
  await buildPendingExports(accountExportDeps(app));
  expect((await call('GET', `/me/export/${exportId}`)).body.data.status).toBe('ready');
  return {
    token,
    userId: user.id as string,
    providerUserId: user.user_id as string,
    ids: [user.id, fileChat, textChat, ingestedId, upload.fileId, share.body.data.shareId, exportId] as string[],
    orderId: order.body.id as string,
  };
}

/** Every item of the table and every key of the bucket that names one of `ids`. */
async function leftovers(ids: string[]) {
  const { db, s3 } = app.clients();
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(new ScanCommand({ TableName: app.tableName, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: app.bucket, ContinuationToken: token }));
    keys.push(...(page.Contents ?? []).map((o) => o.Key!));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  const names = (text: string) => ids.some((id) => text.includes(id));
  return { items: items.filter((item) => names(JSON.stringify(item))), keys: keys.filter(names), all: items };
}

test('DELETE /me: tokens die at once, nothing of the user is left but the tombstoned order, a new sign-in is a new user', async () => {
  const alice = await populatedUser('alice@example.com');
  const bystander = await populatedUser('bob@example.com');
  const before = await leftovers(alice.ids);
  expect(before.items.length).toBeGreaterThan(10);

  const startedAt = performance.now();
  const erased = await app.request('DELETE', '/me', { token: alice.token });
  console.log(
    `Erasure: ${before.items.length} items and ${before.keys.length} objects of the user; DELETE /me answered ` +
      `${erased.body.data?.status} in ${Math.round(performance.now() - startedAt)} ms`,
  );
  expect(erased.status).toBe(202);
  expect(['erased', 'pending']).toContain(erased.body.data.status);
  const after = await app.request('GET', '/chat', { token: alice.token });
  expect(after.status).toBe(401);
  expect(after.body.success).toBe(false);

  // The erasure ends within the request or by the sweep: wait until the listing is clean.
  const left = await until(
    'the erasure to finish',
    async () => {
      await resumeErasures(erasureDeps(app));
      return leftovers(alice.ids);
    },
    (l) => l.items.length === 0 && l.keys.length === 0,
  );
  const order = left.all.find((item) => item.PK === `ORDER#${alice.orderId}`);
  expect(order).toMatchObject({ userId: tombstoneUserId(alice.userId), status: 'New' });
  expect(order).not.toHaveProperty('GSI1PK');
  expect(JSON.stringify(order)).not.toContain('alice@example.com');
  expect(left.all.some((item) => JSON.stringify(item).includes('alice@example.com'))).toBe(false);
  const adminOrders = await app.request('GET', '/orders?limit=100', { token: admin });
  expect(adminOrders.body.find((o: { id: string }) => o.id === alice.orderId)).toMatchObject({
    userId: tombstoneUserId(alice.userId),
  });

  // Bob's data is untouched.
  expect((await leftovers(bystander.ids)).items.length).toBeGreaterThan(10);
  expect((await app.request('GET', '/chat', { token: bystander.token })).body.data).toHaveLength(2);

  // Erasing again with the dead token is refused; the same identity signs up afresh, with nothing.
  expect((await app.request('DELETE', '/me', { token: alice.token })).status).toBe(401);
  const again = await app.signIn('alice@example.com');
  expect(again.status).toBe(201);
  expect(again.user.id).not.toBe(alice.userId);
  for (const path of ['/chat', '/upload']) {
    const listed = await app.request('GET', path, { token: again.token });
    expect([listed.status, listed.body.data]).toEqual([200, []]);
  }
  const orders = await app.request('GET', '/orders', { token: again.token });
  expect([orders.status, orders.body]).toEqual([200, []]);
});

/** A chat store whose second delete dies (the function timed out, the host crashed). */
class DyingChats extends ChatRepository {
  deletes = 0;
  override async delete(chatId: string, userId: string): ReturnType<ChatRepository['delete']> {
    if (++this.deletes === 2) throw new Error('the function died half-way');
    return super.delete(chatId, userId);
  }
}

test('an erasure that dies half-way is refused to the token at once and finished by running it again', async () => {
  const carol = await populatedUser('carol@example.com');
  const users = new UserRepository(app.clients().db, app.tableName);
  const marked = await users.markErasing(carol.userId, new Date().toISOString());
  expect(marked).toBeDefined();
  const dying = new DyingChats(app.clients().db, app.tableName);
  await expect(eraseUser(erasureDeps(app, dying), marked!)).rejects.toThrow('half-way');
  expect(dying.deletes).toBe(2);
  // Half done: the files are gone, one chat is not; the token is already dead.
  const half = await leftovers(carol.ids);
  expect(half.items.length).toBeGreaterThan(0);
  expect((await app.request('GET', '/chat', { token: carol.token })).status).toBe(401);

  expect(await resumeErasures(erasureDeps(app))).toBeGreaterThanOrEqual(1);
  const left = await leftovers(carol.ids);
  expect(left.items).toEqual([]);
  expect(left.keys).toEqual([]);
  expect(left.all.find((item) => item.PK === `ORDER#${carol.orderId}`)).toMatchObject({
    userId: tombstoneUserId(carol.userId),
  });
  // Nothing is left for the sweep.
  expect(await resumeErasures(erasureDeps(app))).toBe(0);
});

test('an erasure out of time answers pending and the sweep finishes it; a sign-in meanwhile is a new user', async () => {
  const dave = await populatedUser('dave@example.com');
  expect(await requestErasure(erasureDeps(app), { userId: dave.userId, hasTime: () => false })).toBe('pending');
  expect((await app.request('GET', '/chat', { token: dave.token })).status).toBe(401);
  const again = await app.signIn('dave@example.com');
  expect([again.status, again.user.id === dave.userId]).toEqual([201, false]);
  expect(await resumeErasures(erasureDeps(app))).toBe(1);
  const left = await leftovers(dave.ids);
  expect([left.items, left.keys]).toEqual([[], []]);
  expect((await app.request('GET', '/chat', { token: again.token })).status).toBe(200);
});

test('a user marked erasing whose identity was not yet released (the function died between) is not signed back in', async () => {
  const erin = await app.signIn('erin@example.com');
  const users = new UserRepository(app.clients().db, app.tableName);
  await users.markErasing(erin.user.id, new Date().toISOString());
  const again = await app.signIn('erin@example.com');
  expect([again.status, again.user.id === erin.user.id]).toEqual([201, false]);
  expect((await app.request('GET', '/chat', { token: again.token })).status).toBe(200);
  expect(await resumeErasures(erasureDeps(app))).toBe(1);
  // The erasure leaves the identity with the new user.
  expect((await app.request('GET', '/chat', { token: again.token })).status).toBe(200);
  expect((await app.signIn('erin@example.com')).user.id).toBe(again.user.id);
});
