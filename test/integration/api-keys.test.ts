import OpenAI from 'openai';
import { refusal } from '#test/helpers/openai-client.ts';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';

// API keys through the gateway: created (shown once, stored as a hash), listed (never the key),
// used as a bearer token within their scopes (with the official OpenAI client and plain calls),
// refused at once when revoked, expired, made up, out of scope, or their user erased; a key
// cannot manage keys.

let app: TestApp;
let token: string;

beforeAll(async () => {
  app = await startTestApp();
  ({ token } = await app.signIn('keys@example.com'));
});
afterAll(() => app?.stop());

const createKey = async (body: object, as = token) => app.request('POST', '/me/api-keys', { token: as, body });
const client = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${app.url}/openai`, maxRetries: 0 });

test('a key is shown once, stored only as its hash, listed without it, and works as a bearer token', async () => {
  const created = await createKey({ name: 'build server', expiresInDays: 30 });
  expect(created.status).toBe(201);
  const { key, id, ...rest } = created.body.data;
  expect(key).toMatch(/^cops_[a-z][a-z0-9]{23}_[A-Za-z0-9_-]{43}$/);
  expect(key).toContain(id);
  expect(rest).toEqual({
    name: 'build server',
    scopes: ['chat', 'search', 'files', 'read'],
    createdAt: expect.any(String),
    expiresAt: expect.any(String),
  });
  expect(Date.parse(rest.expiresAt) - Date.parse(rest.createdAt)).toBe(30 * 86_400_000);

  // The table holds the SHA-256 of the key, not the key.
  const { Item } = await app
    .clients()
    .db.send(new GetCommand({ TableName: app.tableName, Key: { PK: `APIKEY#${id}`, SK: 'META' } }));
  expect(JSON.stringify(Item)).not.toContain(key.split('_').at(-1));
  expect(Item!.hash).toMatch(/^[0-9a-f]{64}$/);

  // A plain call and the OpenAI client both get in with it, as its user.
  const me = await app.request('GET', '/me', { token: key });
  expect(me.status).toBe(200);
  expect(me.body.data.user.email).toBe('keys@example.com');
  const models = await client(key).models.list();
  expect(models.data.map((m) => m.id)).toEqual(['chat', 'library']);

  // The list never shows a key, and says when it was last used.
  const list = await app.request('GET', '/me/api-keys', { token });
  expect(list.status).toBe(200);
  expect(list.text).not.toContain(key);
  const listed = list.body.data.find((k: { id: string }) => k.id === id);
  expect(listed).toEqual({ id, ...rest, lastUsedAt: expect.any(String) });
});

test("a revoked key is refused on the very next request (401 in OpenAI's shape); another user cannot revoke it", async () => {
  const { key, id } = (await createKey({ name: 'to revoke' })).body.data;
  const openai = client(key);
  expect((await openai.models.list()).data.length).toBeGreaterThan(0);

  const stranger = (await app.signIn('stranger@example.com')).token;
  expect((await app.request('DELETE', `/me/api-keys/${id}`, { token: stranger })).status).toBe(404);
  expect((await openai.models.list()).data.length).toBeGreaterThan(0);
  // Used before on each route's instance, so the instance recalls it (a read, and a write):
  // the fresh check that runs beside the request must still refuse it once revoked.
  expect((await app.request('GET', '/me', { token: key })).status).toBe(200);
  expect((await app.request('GET', '/me', { token: key })).status).toBe(200);
  const chat = { name: 'by key', type: 'text' };
  expect((await app.request('POST', '/chat', { token: key, body: chat })).status).toBe(201);

  const revoked = await app.request('DELETE', `/me/api-keys/${id}`, { token });
  expect(revoked.body).toMatchObject({ statusCode: 200, data: { id, revoked: true } });
  const { status, error } = await refusal(openai.models.list());
  expect(status).toBe(401);
  expect(error).toEqual({
    message: 'Invalid API key',
    type: 'invalid_request_error',
    param: null,
    code: 'invalid_api_key',
  });
  expect((await app.request('GET', '/me', { token: key })).status).toBe(401);
  expect((await app.request('POST', '/chat', { token: key, body: chat })).status).toBe(401);
  expect((await app.request('DELETE', `/me/api-keys/${id}`, { token })).status).toBe(404);
});

test('an expired key, a made-up key and a key whose secret is altered are refused', async () => {
  const { key, id } = (await createKey({ name: 'short-lived', expiresInDays: 1 })).body.data;
  expect((await app.request('GET', '/me', { token: key })).status).toBe(200);
  // A day passes: its expiry is moved into the past where it is stored.
  await app.clients().db.send(
    new UpdateCommand({
      TableName: app.tableName,
      Key: { PK: `APIKEY#${id}`, SK: 'META' },
      UpdateExpression: 'SET expiresAt = :past',
      ExpressionAttributeValues: { ':past': new Date(Date.now() - 1000).toISOString() },
    }),
  );
  const expired = await refusal(client(key).models.list());
  expect(expired.status).toBe(401);
  expect(expired.error).toMatchObject({ message: 'This API key has expired', code: 'invalid_api_key' });
  // GET /me's instance recalls the key from before its expiry: the fresh check still refuses it.
  expect((await app.request('GET', '/me', { token: key })).body.message).toBe('This API key has expired');

  const madeUp = `cops_${'a'.repeat(24)}_${'b'.repeat(43)}`;
  expect((await refusal(client(madeUp).models.list())).status).toBe(401);
  const live = (await createKey({ name: 'altered' })).body.data.key as string;
  const altered = `${live.slice(0, -1)}${live.endsWith('A') ? 'B' : 'A'}`;
  expect((await refusal(client(altered).models.list())).status).toBe(401);
  expect((await app.request('GET', '/me', { token: altered })).body.message).toBe('Invalid API key');
});

test('a key works only within its scopes (403), and never on routes no scope covers', async () => {
  const { key } = (await createKey({ name: 'reader', scopes: ['read'] })).body.data;
  expect((await app.request('GET', '/chat', { token: key })).status).toBe(200);
  const { status, error } = await refusal(
    client(key).chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: 'hello' }] }),
  );
  expect(status).toBe(403);
  expect(error).toMatchObject({
    type: 'permission_error',
    message: 'This API key lacks the scope "chat" this route needs',
  });
  const writing = await app.request('POST', '/chat', { token: key, body: { name: 'nope' } });
  expect(writing.status).toBe(403);
  // Orders, the account's erasure and export are for a signed-in person only.
  expect((await app.request('GET', '/orders', { token: key })).status).toBe(403);
  expect((await app.request('POST', '/me/export', { token: key })).status).toBe(403);
});

test('a key cannot create, list or revoke keys', async () => {
  const { key, id } = (await createKey({ name: 'all scopes' })).body.data;
  const made = await createKey({ name: 'child' }, key);
  expect(made.status).toBe(403);
  expect(made.body.message).toBe('API keys cannot be used on this route: use a service token from POST /auth');
  expect((await app.request('GET', '/me/api-keys', { token: key })).status).toBe(403);
  expect((await app.request('DELETE', `/me/api-keys/${id}`, { token: key })).status).toBe(403);
  const list = await app.request('GET', '/me/api-keys', { token });
  expect(list.body.data.some((k: { name: string }) => k.name === 'child')).toBe(false);
});

test('bad requests are 400s with the fields named', async () => {
  const res = await createKey({ name: '', scopes: ['admin'], expiresInDays: 0 });
  expect(res.status).toBe(400);
  expect(res.body.errors.map((e: { path: string }) => e.path).sort()).toEqual([
    'body.expiresInDays',
    'body.name',
    'body.scopes.0',
  ]);
});

test('DELETE /me ends every key of the user at once, and the erasure deletes them', async () => {
  const user = await app.signIn('leaving@example.com');
  const { key, id } = (await createKey({ name: 'leaving' }, user.token)).body.data;
  expect((await client(key).models.list()).data.length).toBe(2);
  expect((await app.request('DELETE', '/me', { token: user.token })).status).toBe(202);
  expect((await refusal(client(key).models.list())).status).toBe(401);
  const { Item } = await app
    .clients()
    .db.send(
      new GetCommand({ TableName: app.tableName, Key: { PK: `APIKEY#${id}`, SK: 'META' }, ConsistentRead: true }),
    );
  expect(Item).toBeUndefined();
});
