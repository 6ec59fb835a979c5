import { Webhook } from 'standardwebhooks';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { makePdfFromLines } from '#test/helpers/make-pdf.ts';
import { until } from '#test/helpers/until.ts';
import type { ReceivedHook } from '#test/helpers/webhook-receiver.ts';

// /me/webhooks through the gateway and the delivery function on its queue, against a loopback
// receiver that checks every delivery with the `standardwebhooks` library (the specification's
// reference verifier): a ping, file.completed after an ingestion, a receiver that answers 500
// twice then 200 (the same webhook-id three times, then delivered), URLs at private and metadata
// addresses refused at creation, and one user's endpoints invisible to another.

let app: TestApp;
let alice: string;
let bob: string;

const create = (token: string, body: unknown) => app.request('POST', '/me/webhooks', { token, body });
const hooksAt = (path: string) => app.webhooks.received.filter((h) => h.path === path);
/** The payload, once the standardwebhooks library has checked its signature and timestamp. */
const verified = (secret: string, hook: ReceivedHook) =>
  new Webhook(secret).verify(hook.body, hook.headers) as {
    type: string;
    timestamp: string;
    data: Record<string, unknown>;
  };

beforeAll(async () => {
  app = await startTestApp({
    webhooks: true,
    pdfs: {
      '/hooked.pdf': { body: Buffer.from(await makePdfFromLines([['Webhooks tell a backend when a file is ready.']])) },
      // A page without any text: read as HTML, it fails NO_TEXT_LAYER.
      '/page.html': { body: `<html>${' '.repeat(4096)}</html>`, contentType: 'text/html' },
    },
    // One second between attempts: a retried delivery is seen within the test's time.
    env: { WEBHOOK_RETRY_DELAYS_S: '1,1', WEBHOOKS_MAX_PER_USER: '3' },
  });
  alice = (await app.signIn('hooks-alice@example.com')).token;
  bob = (await app.signIn('hooks-bob@example.com')).token;
});
afterAll(() => app?.stop());

test('an endpoint is created with a secret shown once; a ping arrives signed per Standard Webhooks and is logged delivered', async () => {
  const created = await create(alice, { url: `${app.webhooks.url}/ping`, events: ['file.completed'] });
  expect(created.status).toBe(201);
  const { id, secret } = created.body.data;
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  const listed = await app.request('GET', '/me/webhooks', { token: alice });
  expect(listed.body.data).toEqual([
    { id, url: `${app.webhooks.url}/ping`, events: ['file.completed'], createdAt: created.body.data.createdAt },
  ]);
  expect(listed.text).not.toContain(secret);

  const ping = await app.request('POST', `/me/webhooks/${id}/test`, { token: alice });
  expect(ping.status).toBe(202);
  const [hook] = await until(
    'the ping',
    () => hooksAt('/ping'),
    (h) => h.length === 1,
  );
  expect(hook!.headers['webhook-id']).toBe(ping.body.data.deliveryId);
  expect(verified(secret, hook!)).toEqual({ type: 'ping', timestamp: expect.any(String), data: { endpointId: id } });
  // A forged body fails the same check.
  expect(() => verified(secret, { ...hook!, body: hook!.body.replace('ping', 'pong') })).toThrow();

  const log = await until(
    'the ping logged delivered',
    async () => (await app.request('GET', `/me/webhooks/${id}/deliveries`, { token: alice })).body.data,
    (items: { status: string }[]) => items[0]?.status === 'delivered',
  );
  expect(log).toEqual([
    {
      id: ping.body.data.deliveryId,
      event: 'ping',
      status: 'delivered',
      attempts: 1,
      lastStatusCode: 200,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    },
  ]);
});

test('file.completed is delivered after an ingestion, with the file', async () => {
  const created = await create(alice, { url: `${app.webhooks.url}/files`, events: ['file.completed', 'file.failed'] });
  const { secret } = created.body.data;
  const upload = await app.request('POST', '/upload', {
    token: alice,
    body: { fileName: 'hooked.pdf', contentType: 'application/pdf', size: 2000 },
  });
  const fileId = upload.body.data.fileId;
  await app.request('POST', '/message/pdf', { token: alice, body: { url: `${app.pdfs.url}/hooked.pdf`, fileId } });
  const [hook] = await until(
    'file.completed',
    () => hooksAt('/files'),
    (h) => h.length >= 1,
  );
  expect(verified(secret, hook!)).toEqual({
    type: 'file.completed',
    timestamp: expect.any(String),
    data: { fileId, fileName: 'hooked.pdf', pages: 1, chunks: 1 },
  });
  expect(hook!.headers['webhook-id']).toMatch(/^msg_[A-Za-z0-9_-]{27}$/);
});

test('file.failed is delivered when an ingestion fails, with the reason', async () => {
  // The /files endpoint of the test above subscribed to file.failed too.
  const upload = await app.request('POST', '/upload', {
    token: alice,
    body: { fileName: 'page.pdf', contentType: 'application/pdf', size: 1000 },
  });
  const fileId = upload.body.data.fileId;
  await app.request('POST', '/message/pdf', { token: alice, body: { url: `${app.pdfs.url}/page.html`, fileId } });
  const hook = await until(
    'file.failed',
    () => hooksAt('/files').find((h) => h.body.includes('file.failed')),
    (h) => h !== undefined,
  );
  expect(JSON.parse(hook!.body)).toEqual({
    type: 'file.failed',
    timestamp: expect.any(String),
    data: { fileId, fileName: 'page.pdf', failure: expect.objectContaining({ reason: 'NO_TEXT_LAYER' }) },
  });
});

test('a receiver that answers 500 twice gets the same webhook-id again until it answers 200', async () => {
  const created = await create(alice, { url: `${app.webhooks.url}/flaky`, events: ['order.paid'] });
  const { id, secret } = created.body.data;
  app.webhooks.answer('/flaky', 500, 500);
  const ping = await app.request('POST', `/me/webhooks/${id}/test`, { token: alice });
  const hooks = await until(
    'three attempts',
    () => hooksAt('/flaky'),
    (h) => h.length === 3,
  );
  expect(new Set(hooks.map((h) => h.headers['webhook-id']))).toEqual(new Set([ping.body.data.deliveryId]));
  for (const hook of hooks) expect(verified(secret, hook).type).toBe('ping');
  // The same body every time (each attempt signs it with its own timestamp).
  expect(new Set(hooks.map((h) => h.body)).size).toBe(1);
  const [delivery] = await until(
    'the delivery logged delivered',
    async () => (await app.request('GET', `/me/webhooks/${id}/deliveries`, { token: alice })).body.data,
    (items: { status: string }[]) => items[0]?.status === 'delivered',
  );
  expect(delivery).toMatchObject({ status: 'delivered', attempts: 3, lastStatusCode: 200 });
});

test.each([
  ['a private address', 'http://10.0.0.8/hook'],
  ['the metadata address', 'http://169.254.169.254/latest/meta-data/'],
  ['a link-local IPv6 address', 'http://[fe80::1]/hook'],
  ['a credential in the URL', 'https://user:pass@example.com/hook'],
  ['another scheme', 'ftp://example.com/hook'],
])('%s is refused at creation (400)', async (_what, url) => {
  const res = await create(alice, { url, events: ['file.completed'] });
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ success: false, errors: [{ path: 'body.url' }] });
});

test('bad bodies are 400; the cap on endpoints is 409', async () => {
  expect((await create(alice, { url: `${app.webhooks.url}/x`, events: [] })).status).toBe(400);
  expect((await create(alice, { url: `${app.webhooks.url}/x`, events: ['file.deleted'] })).status).toBe(400);
  expect((await create(alice, { events: ['file.completed'] })).status).toBe(400);
  // Alice has 3 (the cap): the fourth is refused.
  const fourth = await create(alice, { url: `${app.webhooks.url}/x`, events: ['file.completed'] });
  expect(fourth.status).toBe(409);
});

test("another user can neither see, ping, read the log of, nor delete someone's endpoint", async () => {
  const [mine] = (await app.request('GET', '/me/webhooks', { token: alice })).body.data;
  expect((await app.request('GET', '/me/webhooks', { token: bob })).body.data).toEqual([]);
  for (const [method, path] of [
    ['POST', `/me/webhooks/${mine.id}/test`],
    ['GET', `/me/webhooks/${mine.id}/deliveries`],
    ['DELETE', `/me/webhooks/${mine.id}`],
  ] as const) {
    const res = await app.request(method, path, { token: bob });
    expect([path, res.status]).toEqual([path, 404]);
  }
  // Still there for its owner; deleted by its owner.
  expect((await app.request('DELETE', `/me/webhooks/${mine.id}`, { token: alice })).status).toBe(200);
  expect((await app.request('GET', `/me/webhooks/${mine.id}/deliveries`, { token: alice })).status).toBe(404);
  expect((await app.request('GET', '/me/webhooks', { token: alice })).body.data).toHaveLength(2);
});
