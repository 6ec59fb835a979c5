import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import {
  errorShapeProblem,
  fillPath,
  isCuidSchema,
  routesUnderTest,
  type RouteUnderTest,
} from './routes-under-test.ts';
import { fieldPaths, setAt, validBody as validBodyOf } from './fuzz-inputs.ts';

// The access-control matrix, generated from the manifest: user B tries every route with user
// A's ids (in the path and in the body), and a plain user tries every `auth: 'admin'` route.
// Each attempt gets the documented status in the route's body shape (a stranger's chat, file
// or order is 404 — as if it did not exist — and 403 on POST /message/logged-in; admin routes
// are 403), and A's data is the same afterwards. A new route or admin action is in the matrix
// without touching this file.

let app: TestApp;
let routes: RouteUnderTest[];

interface Person {
  token: string;
  id: string;
  chatId: string;
  /** The reply in the text chat (a message id a route takes beside its chat's). */
  messageId: string;
  fileChatId: string;
  fileId: string;
  orderId: string;
  exportId: string;
  /** A collection holding fileId. */
  collectionId: string;
  apiKeyId: string;
  /** A webhook endpoint. */
  webhookId: string;
}
let alice: Person;
let bob: Person;
let admin: string;
let productId: string;

/** Which record a path parameter or body field names: by its name, or for `id` by the path's segment before it. */
const kindOf = (route: RouteUnderTest, name: string) => {
  const segments = route.path.split('/');
  return name === 'id' ? segments[segments.indexOf('{id}') - 1]! : name;
};
/** Records with an owner; products are shared (read by every user, written by admins). */
const ownedKinds = new Set([
  'chatId',
  'fileId',
  'orders',
  'exportId',
  'collections',
  'collectionId',
  'api-keys',
  'webhookId',
]);

function idsOf(p: Person): Record<string, string> {
  return {
    chatId: p.chatId,
    messageId: p.messageId,
    fileId: p.fileId,
    orders: p.orderId,
    products: productId,
    productId,
    exportId: p.exportId,
    collections: p.collectionId,
    collectionId: p.collectionId,
    'api-keys': p.apiKeyId,
    webhookId: p.webhookId,
  };
}

async function person(email: string): Promise<Person> {
  const { token, user } = await app.signIn(email);
  const post = async (path: string, body: unknown) => {
    const res = await app.request('POST', path, { token, body });
    if (res.status !== 201 && res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const chat = (await post('/chat', { type: 'text', name: `${email} text` })).data;
  const reply = (await post('/message/logged-in', { chatId: chat.id, prompt: 'hello' })).data;
  const fileChat = (await post('/chat', { type: 'file', name: `${email} files` })).data;
  // Two of each list, so a second page and its cursor exist.
  await post('/upload', { fileName: 'other.pdf', contentType: 'application/pdf', size: 1234 });
  const upload = (await post('/upload', { fileName: 'private.pdf', contentType: 'application/pdf', size: 1234 })).data;
  await post('/orders', { items: [{ productId, quantity: 1 }] });
  const order = await post('/orders', { items: [{ productId, quantity: 2 }] });
  const accountExport = (await app.request('POST', '/me/export', { token })).body.data;
  await post('/collections', { name: `${email} other` });
  const collection = (await post('/collections', { name: `${email} private` })).data;
  await post('/me/api-keys', { name: 'other' });
  const apiKey = (await post('/me/api-keys', { name: 'private' })).data;
  const member = await app.request('PUT', `/collections/${collection.id}/files/${upload.fileId}`, { token });
  if (member.status !== 200) throw new Error(`collection file: ${member.status} ${member.text}`);
  // Loopback receivers are allowed here (the local runtime's setting); nothing is delivered to them.
  await post('/me/webhooks', { url: 'http://127.0.0.1:9/other', events: ['file.completed'] });
  const webhook = (await post('/me/webhooks', { url: 'http://127.0.0.1:9/private', events: ['file.failed'] })).data;
  return {
    token,
    id: user.id,
    chatId: chat.id,
    messageId: reply.messageId,
    fileChatId: fileChat.id,
    fileId: upload.fileId,
    orderId: order.id,
    exportId: accountExport.exportId,
    collectionId: collection.id,
    apiKeyId: apiKey.id,
    webhookId: webhook.id,
  };
}

beforeAll(async () => {
  app = await startTestApp({
    pollers: false,
    env: { ADMIN_EMAILS: 'root@example.com', PDF_ALLOW_LOOPBACK: 'false', PDF_SYNC_WAIT_MS: '0' },
  });
  routes = await routesUnderTest();
  admin = (await app.signIn('root@example.com')).token;
  productId = (
    await app.request('POST', '/products', { token: admin, body: { name: 'Lamp', priceCents: 1250, currency: 'EUR' } })
  ).body.id;
  alice = await person('alice@example.com');
  bob = await person('bob@example.com');
});
afterAll(async () => {
  await app?.stop();
  console.log(
    `Access-control matrix: ${cells.stranger} stranger attempts on ${strangerRoutes.size} routes, ${cells.admin} admin-only attempts on ${adminRoutes.size} routes, ${cells.lists} list checks; all refused as documented`,
  );
});

const cells = { stranger: 0, admin: 0, lists: 0 };
const strangerRoutes = new Set<string>();
const adminRoutes = new Set<string>();

/** Everything of Alice's a stranger could touch, read as Alice. */
async function aliceSnapshot() {
  const get = async (path: string, token = alice.token) => {
    const res = await app.request('GET', path, { token });
    return { status: res.status, body: res.body };
  };
  return {
    chats: await get('/chat'),
    messages: await get(`/chat/${alice.chatId}/messages`),
    fileMessages: await get(`/chat/${alice.fileChatId}/messages`),
    file: await get(`/message/pdf/${alice.fileId}`),
    order: await get(`/orders/${alice.orderId}`),
    orders: await get('/orders'),
    product: await get(`/products/${productId}`),
    products: await get('/products'),
    collections: await get('/collections'),
    collection: await get(`/collections/${alice.collectionId}`),
    collectionFiles: await get(`/collections/${alice.collectionId}/files`),
  };
}

/** A valid body for the route, referring to `who`'s records. */
const validBody = (route: RouteUnderTest, who: Person) =>
  validBodyOf(route, { ...idsOf(who), url: 'http://127.0.0.1:9/x.pdf' });

/**
 * The status the contract documents for a stranger: 403 on POST /message/logged-in (the spec's), else 404
 * (other routes list 403 for an API key outside its scopes, not for a stranger).
 */
const strangerStatus = (route: RouteUnderTest) => (route.name === 'send-message' ? 403 : 404);

interface Attempt {
  route: RouteUnderTest;
  what: string;
  path: string;
  body: unknown;
  expected: number;
}

function strangerAttempts(): Attempt[] {
  const out: Attempt[] = [];
  for (const route of routes.filter((r) => r.auth === 'user')) {
    // Alice's id in the path, everything else valid and Bob's.
    const ownedParams = route.params.filter((p) => ownedKinds.has(kindOf(route, p)));
    if (ownedParams.length) {
      const values = Object.fromEntries(route.params.map((p) => [p, idsOf(alice)[kindOf(route, p)] ?? '']));
      out.push({
        route,
        what: `Alice's ${ownedParams.join(', ')} in the path`,
        path: fillPath(route.path, values),
        body: validBody(route, bob),
        expected: strangerStatus(route),
      });
    }
    // Alice's id in one body field, the rest of the body Bob's.
    for (const field of route.bodySchema ? fieldPaths(route.bodySchema) : []) {
      const name = String(field.path.at(-1));
      if (!isCuidSchema(field.schema) || !ownedKinds.has(name)) continue;
      const aliceId = name === 'chatId' && route.name !== 'send-message' ? alice.fileChatId : idsOf(alice)[name]!;
      const body = setAt(validBody(route, bob), field.path, aliceId, route.bodySchema!, idsOf(bob));
      const values = Object.fromEntries(route.params.map((p) => [p, idsOf(bob)[kindOf(route, p)] ?? '']));
      out.push({
        route,
        what: `Alice's ${name} in body.${field.path.join('.')}`,
        path: fillPath(route.path, values),
        body,
        expected: strangerStatus(route),
      });
    }
  }
  return out;
}

// One request after another, most of them the first of their route (a cold instance each): the
// time limit is a hang guard that a CI machine at load 10 stays within (the default 60 s was not, once).
test('a stranger gets the documented status on every route that takes an id, and changes nothing', async () => {
  const before = await aliceSnapshot();
  const attempts = strangerAttempts();
  const problems: string[] = [];
  for (const a of attempts) {
    const res = await app.request(a.route.method, a.path, {
      token: bob.token,
      ...(a.body !== undefined && { body: a.body }),
    });
    cells.stranger++;
    strangerRoutes.add(a.route.name);
    const shape = errorShapeProblem(a.route.shape, res.status, res.body);
    if (res.status !== a.expected || shape)
      problems.push(
        `${a.route.name} (${a.what}): ${res.status} ${res.text.slice(0, 200)}${shape ? ` — ${shape}` : ''}`,
      );
    // The answer names nothing of Alice's.
    for (const secret of [alice.id, 'alice@example.com', 'private.pdf', 'alice@example.com text']) {
      if (res.text.includes(secret)) problems.push(`${a.route.name} (${a.what}) leaks ${secret}`);
    }
  }
  expect(problems).toEqual([]);
  // Every kind of owned record was tried, in paths and in bodies.
  const tried = attempts.map((a) => `${a.route.name}: ${a.what}`);
  expect(tried).toEqual(
    expect.arrayContaining([
      "update-chat: Alice's chatId in the path",
      "delete-chat: Alice's chatId in the path",
      "list-messages: Alice's chatId in the path",
      "send-message: Alice's chatId in body.chatId",
      "ingest-pdf: Alice's fileId in body.fileId",
      "ingest-pdf: Alice's chatId in body.chatId",
      "get-pdf-status: Alice's fileId in the path",
      "delete-upload: Alice's fileId in the path",
      "get-order: Alice's id in the path",
      "get-collection: Alice's id in the path",
      "delete-collection: Alice's id in the path",
      "add-collection-file: Alice's id, fileId in the path",
      "create-chat: Alice's collectionId in body.collectionId",
      "ingest-pdf: Alice's collectionId in body.collectionId",
      "search-files: Alice's collectionId in body.collectionId",
    ]),
  );
  expect(await aliceSnapshot()).toEqual(before);
}, 300_000);

test('a stranger is refused the same way as for a record that does not exist (no existence oracle)', async () => {
  for (const a of strangerAttempts().filter((x) => x.expected === 404 && x.route.params.length)) {
    const ghost = a.path.replace(/[a-z][a-z0-9]{23}/g, (id) =>
      Object.values(idsOf(alice)).includes(id) ? 'z'.repeat(24) : id,
    );
    const [mine, missing] = await Promise.all([
      app.request(a.route.method, a.path, { token: bob.token, ...(a.body !== undefined && { body: a.body }) }),
      app.request(a.route.method, ghost, { token: bob.token, ...(a.body !== undefined && { body: a.body }) }),
    ]);
    expect([a.route.name, mine.status, mine.body]).toEqual([a.route.name, missing.status, missing.body]);
  }
});

test("a stranger's lists show none of Alice's records, and Alice's cursors are refused", async () => {
  const aliceIds = new Set([
    alice.chatId,
    alice.fileChatId,
    alice.fileId,
    alice.orderId,
    alice.collectionId,
    alice.apiKeyId,
    alice.webhookId,
  ]);
  // A list that needs more than paging: the search's words (every seeded chat's name holds "example").
  const needs: Record<string, string> = { 'search-chats': '&q=example' };
  for (const route of routes.filter((r) => r.method === 'GET' && r.params.length === 0 && r.auth !== 'admin')) {
    const more = needs[route.name] ?? '';
    if (route.name === 'get-me') {
      // Not a list: the caller's own account, whoever else has one.
      const mine = await app.request('GET', route.path, { token: bob.token });
      cells.lists++;
      expect(mine.body.data.user.id).toBe(bob.id);
      continue;
    }
    if (route.name === 'openai-list-models') {
      // OpenAI's model list, whole (OpenAI does not page it): Bob's models name none of Alice's ids.
      const models = await app.request('GET', route.path, { token: bob.token });
      cells.lists++;
      expect(models.body.data.filter((m: { id: string }) => [...aliceIds].some((id) => m.id.endsWith(id)))).toEqual([]);
      continue;
    }
    const res = await app.request('GET', `${route.path}?limit=100${more}`, { token: bob.token });
    cells.lists++;
    expect([route.name, res.status]).toEqual([route.name, 200]);
    const items: any[] = route.shape === 'bare' ? res.body : res.body.data;
    expect(items.filter((i) => aliceIds.has(i.id ?? i.fileId ?? i.chatId) || i.userId === alice.id)).toEqual([]);
    // A page cursor Alice was given is pinned to her partition.
    const first = await app.request('GET', `${route.path}?limit=1${more}`, { token: alice.token });
    const cursor = first.headers.get('x-next-cursor');
    if (route.name === 'list-products') continue; // a shared list
    expect([route.name, cursor]).toEqual([route.name, expect.any(String)]);
    const stolen = await app.request('GET', `${route.path}?limit=1${more}&cursor=${cursor}`, { token: bob.token });
    cells.lists++;
    expect([route.name, stolen.status]).toEqual([route.name, 400]);
  }
});

test('a plain user gets 403 on every admin route, even with a valid request, and nothing changes', async () => {
  const admins = routes.filter((r) => r.auth === 'admin');
  expect(admins.map((r) => r.name)).toEqual(
    expect.arrayContaining(['update-order', 'create-product', 'update-product', 'delete-product']),
  );
  const before = await aliceSnapshot();
  for (const route of admins) {
    const values = Object.fromEntries(route.params.map((p) => [p, idsOf(alice)[kindOf(route, p)] ?? '']));
    const body = route.name === 'update-order' ? { status: 'Cancelled' } : validBody(route, alice);
    for (const who of [alice, bob]) {
      const res = await app.request(route.method, fillPath(route.path, values), {
        token: who.token,
        ...(body !== undefined && { body }),
      });
      cells.admin++;
      adminRoutes.add(route.name);
      expect([route.name, res.status, errorShapeProblem(route.shape, res.status, res.body)]).toEqual([
        route.name,
        403,
        undefined,
      ]);
    }
    // Invalid input too: the role is checked before the body, so a user learns nothing of the schema.
    const junk = await app.request(
      route.method,
      fillPath(route.path, Object.fromEntries(route.params.map((p) => [p, 'x']))),
      { token: bob.token, body: { nonsense: true } },
    );
    cells.admin++;
    expect([route.name, junk.status]).toEqual([route.name, 403]);
  }
  expect(await aliceSnapshot()).toEqual(before);

  // The same requests from an admin are not refused: the 403 was the role, not the request.
  const cancel = await app.request('PUT', `/orders/${alice.orderId}`, { token: admin, body: { status: 'Cancelled' } });
  expect(cancel.status).toBe(200);
  expect(cancel.body.status).toBe('Cancelled');
});
