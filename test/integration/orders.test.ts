import { createId } from '#shared/ids.ts';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '#infra/local/emulators.ts';
import type { OrderStatus } from '#shared/orders/order-status.ts';
import { ALLOWED_MOVES, EVERY_MOVE } from '#test/helpers/order-moves.ts';
import { fieldError, ISO, justCreated } from '#test/helpers/response-bodies.ts';
import { OrderRepository } from '#shared/orders/order-repository.ts';
import { changeOrderStatus } from '#shared/orders/order-service.ts';
import { ConflictError } from '#shared/errors.ts';
import { systemClock } from '#shared/clock.ts';

// Orders over real HTTP: placing, reading, listing (admin/user split, paging) and the status
// machine with its race guard. Order routes answer bare bodies and `{ message, errors? }` errors.

let app: TestApp;
let admin: string;
let alice: { token: string; id: string };
let bob: { token: string; id: string };
let lamp: { id: string; name: string; priceCents: number };
let bulb: { id: string; name: string; priceCents: number };
let dollarItem: { id: string };

beforeAll(async () => {
  app = await startTestApp({ env: { ADMIN_EMAILS: 'admin@example.com' } });
  const [a, al, bo] = await Promise.all([
    app.signIn('admin@example.com'),
    app.signIn('alice@example.com'),
    app.signIn('bob@example.com'),
  ]);
  admin = a.token;
  alice = { token: al.token, id: al.user.id };
  bob = { token: bo.token, id: bo.user.id };
  const product = async (body: object) => {
    const res = await app.request('POST', '/products', { token: admin, body });
    if (res.status !== 201) throw new Error(res.text);
    return res.body;
  };
  lamp = await product({ name: 'Lamp', priceCents: 1250, currency: 'EUR' });
  bulb = await product({ name: 'Bulb', priceCents: 199, currency: 'EUR' });
  dollarItem = await product({ name: 'Import', priceCents: 500, currency: 'USD' });
});
afterAll(() => app?.stop());

/** An order (by default, one lamp). */
async function placeOrder(token: string, body: object = { items: [{ productId: lamp.id, quantity: 1 }] }) {
  const res = await app.request('POST', '/orders', { token, body });
  expect(res.status).toBe(201);
  return res.body;
}

const put = (id: string, status: string, token = admin) =>
  app.request('PUT', `/orders/${id}`, { token, body: { status } });

/** The moves that bring a new order to each status. */
const PATH_TO: Record<OrderStatus, OrderStatus[]> = {
  New: [],
  Processing: ['Processing'],
  Shipped: ['Processing', 'Shipped'],
  Delivered: ['Processing', 'Shipped', 'Delivered'],
  Cancelled: ['Cancelled'],
};

async function orderIn(status: OrderStatus) {
  const order = await placeOrder(alice.token);
  for (const step of PATH_TO[status]) expect((await put(order.id, step)).status).toBe(200);
  return order;
}

describe('POST /orders', () => {
  test('one item: 201 with the bare order, status New, owned by the caller, priced from the product', async () => {
    const order = await placeOrder(alice.token);
    expect(order).toEqual({
      ...justCreated(order),
      userId: alice.id,
      status: 'New',
      providerPaymentIntentId: null,
      payment: null, // this app takes no payments (test/integration/payments.test.ts does)
      items: [{ productId: lamp.id, name: 'Lamp', quantity: 1, unitPriceCents: 1250, currency: 'EUR' }],
      totalCents: 1250,
      currency: 'EUR',
    });
  });

  test.each([
    ['no body', undefined],
    ['an empty body', {}],
    ['no items', { items: [] }],
  ])('%s: 400 saying an order needs an item, and no order is made', async (_what, body) => {
    const before = (await app.request('GET', '/orders?limit=100', { token: alice.token })).body.length;
    const res = await app.request('POST', '/orders', { token: alice.token, ...(body && { body }) });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message: expect.any(String),
      errors: [expect.objectContaining({ path: 'body.items', message: expect.stringMatching(/at least one item/) })],
    });
    expect((await app.request('GET', '/orders?limit=100', { token: alice.token })).body).toHaveLength(before);
  });

  test('with items: priced from the products at order time, total computed', async () => {
    const order = await placeOrder(alice.token, {
      items: [
        { productId: lamp.id, quantity: 2 },
        { productId: bulb.id, quantity: 3 },
      ],
    });
    expect(order).toMatchObject({
      status: 'New',
      items: [
        { productId: lamp.id, name: 'Lamp', quantity: 2, unitPriceCents: 1250, currency: 'EUR' },
        { productId: bulb.id, name: 'Bulb', quantity: 3, unitPriceCents: 199, currency: 'EUR' },
      ],
      totalCents: 2 * 1250 + 3 * 199,
      currency: 'EUR',
    });

    // A later price change does not touch the placed order.
    expect(
      (await app.request('PATCH', `/products/${bulb.id}`, { token: admin, body: { priceCents: 250 } })).status,
    ).toBe(200);
    const again = await app.request('GET', `/orders/${order.id}`, { token: alice.token });
    expect(again.body).toEqual(order);
    expect((await placeOrder(alice.token, { items: [{ productId: bulb.id, quantity: 1 }] })).totalCents).toBe(250);
  });

  test('an admin places an order of their own too', async () => {
    const order = await placeOrder(admin, { items: [{ productId: dollarItem.id, quantity: 1 }] });
    expect(order).toMatchObject({ status: 'New', totalCents: 500, currency: 'USD' });
  });

  test('an unknown product is a 400 naming it', async () => {
    const ghost = createId();
    const res = await app.request('POST', '/orders', {
      token: alice.token,
      body: {
        items: [
          { productId: lamp.id, quantity: 1 },
          { productId: ghost, quantity: 1 },
        ],
      },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      message: `Unknown product: ${ghost}`,
      errors: [expect.objectContaining({ path: 'body.items.1.productId', message: expect.stringContaining(ghost) })],
    });
  });

  test('items in two currencies are a 400', async () => {
    const res = await app.request('POST', '/orders', {
      token: alice.token,
      body: {
        items: [
          { productId: lamp.id, quantity: 1 },
          { productId: dollarItem.id, quantity: 1 },
        ],
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/one currency.*(EUR, USD|USD, EUR)/);
    expect(res.body.errors).toHaveLength(2);
  });

  const item = (over: object = {}) => ({ productId: createId(), quantity: 1, ...over });
  test.each([
    ['a zero quantity', { items: [item({ quantity: 0 })] }, 'body.items.0.quantity'],
    ['a negative quantity', { items: [item({ quantity: -2 })] }, 'body.items.0.quantity'],
    ['a fractional quantity', { items: [item({ quantity: 1.5 })] }, 'body.items.0.quantity'],
    ['a huge quantity', { items: [item({ quantity: 1001 })] }, 'body.items.0.quantity'],
    ['a missing quantity', { items: [{ productId: createId() }] }, 'body.items.0.quantity'],
    ['a product id that is not a CUID', { items: [item({ productId: 'lamp' })] }, 'body.items.0.productId'],
    [
      'the same product twice',
      { items: [item({ productId: 'a'.repeat(24) }), item({ productId: 'a'.repeat(24) })] },
      'body.items.1.productId',
    ],
    ['101 items', { items: Array.from({ length: 101 }, () => item()) }, 'body.items'],
    ['items not an array', { items: { productId: createId(), quantity: 1 } }, 'body.items'],
    ['an extra field on an item', { items: [item({ price: 1 })] }, 'body.items.0'],
    ['a client-chosen status', { status: 'Delivered' }, 'body'],
    ['a client-chosen total', { totalCents: 1 }, 'body'],
    // The server makes the payment intent; a client never names one.
    ['a client-chosen payment intent id', { providerPaymentIntentId: 'pi_3MtwBwLkdIwHu7ix28a3tqPa' }, 'body'],
    ['an empty payment intent id', { providerPaymentIntentId: '' }, 'body'],
  ])('%s is a 400 { message, errors }', async (_what, body, path) => {
    const res = await app.request('POST', '/orders', { token: alice.token, body });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(fieldError(path));
  });

  test('malformed JSON is a 400; no token is a 401 { message }', async () => {
    const bad = await app.request('POST', '/orders', {
      token: alice.token,
      rawBody: '{"items": [',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'Malformed JSON body', errors: expect.any(Array) });
    const anon = await app.request('POST', '/orders', { body: {} });
    expect(anon.status).toBe(401);
    expect(anon.body).toEqual({ message: expect.any(String) });
  });
});

describe('GET /orders/{id}', () => {
  test('the owner and an admin read it; another user gets 404 like a missing order', async () => {
    const order = await placeOrder(alice.token, { items: [{ productId: lamp.id, quantity: 1 }] });
    for (const token of [alice.token, admin]) {
      const res = await app.request('GET', `/orders/${order.id}`, { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(order);
    }
    const stranger = await app.request('GET', `/orders/${order.id}`, { token: bob.token });
    const missing = await app.request('GET', `/orders/${createId()}`, { token: bob.token });
    expect(stranger.status).toBe(404);
    expect(stranger.body).toEqual({ message: 'Order not found' });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual(stranger.body);
  });

  test('a bad id is a 400; no token is a 401', async () => {
    const bad = await app.request('GET', '/orders/ORDER-1', { token: alice.token });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: expect.any(String), errors: [expect.objectContaining({ path: 'params.id' })] });
    const anon = await app.request('GET', `/orders/${createId()}`);
    expect(anon.status).toBe(401);
    expect(anon.body).toEqual({ message: expect.any(String) });
  });
});

describe('GET /orders', () => {
  const newestFirst = (list: { createdAt: string; id: string }[]) =>
    list.every((o, i) => i === 0 || `${list[i - 1]!.createdAt}#${list[i - 1]!.id}` > `${o.createdAt}#${o.id}`);

  async function all(token: string, limit: number) {
    const out: any[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: any = await app.request('GET', `/orders?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, {
        token,
      });
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      expect(res.body.length).toBeLessThanOrEqual(limit);
      out.push(...res.body);
      cursor = res.headers.get('x-next-cursor');
      pages++;
    } while (cursor && pages < 100);
    return { orders: out, pages };
  }

  test("a user sees only their own orders, newest first; an admin sees everyone's", async () => {
    const bobs = [await placeOrder(bob.token), await placeOrder(bob.token), await placeOrder(bob.token)];

    const mine = await app.request('GET', '/orders', { token: bob.token });
    expect(mine.status).toBe(200);
    expect(mine.body.map((o: any) => o.id).sort()).toEqual(bobs.map((o) => o.id).sort());
    expect(newestFirst(mine.body)).toBe(true);
    expect(mine.headers.get('x-next-cursor')).toBeNull();

    const { orders } = await all(admin, 100);
    const owners = new Set(orders.map((o) => o.userId));
    expect([...owners]).toEqual(expect.arrayContaining([alice.id, bob.id]));
    expect(orders.map((o) => o.id)).toEqual(expect.arrayContaining(bobs.map((o) => o.id)));
    expect(newestFirst(orders)).toBe(true);

    const alices = await all(alice.token, 100);
    expect(alices.orders.length).toBeGreaterThan(0);
    expect(alices.orders.every((o) => o.userId === alice.id)).toBe(true);
    expect(alices.orders.length + 3 + orders.filter((o) => o.userId !== alice.id && o.userId !== bob.id).length).toBe(
      orders.length,
    );
  });

  test('pages with ?limit= and x-next-cursor cover the list exactly once, in order', async () => {
    const whole = await all(admin, 100);
    const paged = await all(admin, 3);
    expect(paged.pages).toBeGreaterThan(2);
    expect(paged.orders.map((o) => o.id)).toEqual(whole.orders.map((o) => o.id));
    const userPaged = await all(alice.token, 2);
    expect(userPaged.orders.map((o) => o.id)).toEqual((await all(alice.token, 100)).orders.map((o) => o.id));
  });

  test("another list's cursor, a forged cursor or a bad limit is a 400", async () => {
    const alicePage = await app.request('GET', '/orders?limit=1', { token: alice.token });
    const aliceCursor = alicePage.headers.get('x-next-cursor');
    expect(aliceCursor).toBeTruthy();
    const adminPage = await app.request('GET', '/orders?limit=1', { token: admin });
    const adminCursor = adminPage.headers.get('x-next-cursor');
    expect(adminCursor).toBeTruthy();
    for (const [token, path] of [
      [bob.token, `/orders?cursor=${aliceCursor}`], // alice's place in her own list
      [bob.token, `/orders?cursor=${adminCursor}`], // the all-orders list
      [admin, `/orders?cursor=${aliceCursor}`],
      [admin, `/products?cursor=${adminCursor}`], // same key attributes, another partition
      [alice.token, '/orders?cursor=bm90LWpzb24'],
      [alice.token, '/orders?limit=0'],
      [alice.token, '/orders?limit=1000'],
      [alice.token, '/orders?status=New'],
    ] as const) {
      const res = await app.request('GET', path, { token });
      expect([path, res.status]).toEqual([path, 400]);
      expect(res.body).toEqual({ message: expect.any(String), errors: expect.any(Array) });
    }
  });

  test('no token is a 401 { message }', async () => {
    const res = await app.request('GET', '/orders');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: expect.any(String) });
  });
});

describe('PUT /orders/{id}', () => {
  test.each(EVERY_MOVE)('%s → %s', async (from, to) => {
    const order = await orderIn(from);
    const res = await put(order.id, to);
    if (ALLOWED_MOVES.has(`${from}>${to}`)) {
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...order, status: to, updatedAt: expect.stringMatching(ISO) });
      expect(res.body.updatedAt >= order.updatedAt).toBe(true);
    } else {
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        message: expect.stringContaining(
          from === to ? `Order is already ${from}` : `Cannot move order from ${from} to ${to}`,
        ),
      });
    }
    const after = await app.request('GET', `/orders/${order.id}`, { token: alice.token });
    expect(after.body.status).toBe(ALLOWED_MOVES.has(`${from}>${to}`) ? to : from);
  });

  test('an unknown status is a 400 listing the allowed values', async () => {
    const order = await placeOrder(alice.token);
    for (const status of ['Lost', 'shipped', '', 42, null]) {
      const res = await app.request('PUT', `/orders/${order.id}`, { token: admin, body: { status } });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([
        expect.objectContaining({
          path: 'body.status',
          message: 'Must be one of New, Processing, Shipped, Delivered, Cancelled',
        }),
      ]);
    }
    for (const body of [{}, { status: 'Processing', note: 'x' }]) {
      expect((await app.request('PUT', `/orders/${order.id}`, { token: admin, body })).status).toBe(400);
    }
    const malformed = await app.request('PUT', `/orders/${order.id}`, {
      token: admin,
      rawBody: 'status=Shipped',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect((await app.request('GET', `/orders/${order.id}`, { token: alice.token })).body.status).toBe('New');
  });

  test('an unknown id is a 404; a bad id is a 400', async () => {
    const res = await put(createId(), 'Processing');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'Order not found' });
    expect((await put('12345', 'Processing')).status).toBe(400);
  });

  test('a user, even the owner, is refused with 403; no token is a 401', async () => {
    const order = await placeOrder(alice.token);
    const own = await put(order.id, 'Cancelled', alice.token);
    expect(own.status).toBe(403);
    expect(own.body).toEqual({ message: expect.stringContaining('admin') });
    expect((await app.request('PUT', `/orders/${order.id}`, { body: { status: 'Cancelled' } })).status).toBe(401);
    expect((await app.request('GET', `/orders/${order.id}`, { token: alice.token })).body.status).toBe('New');
  });

  test('two racing updates from the same status: exactly one 200 and one 409', async () => {
    // Shipped and Cancelled exclude each other whichever lands first, so the outcome is certain.
    for (let round = 0; round < 5; round++) {
      const order = await orderIn('Processing');
      const [a, b] = await Promise.all([put(order.id, 'Shipped'), put(order.id, 'Cancelled')]);
      expect([a.status, b.status].sort()).toEqual([200, 409]);
      const winner = a.status === 200 ? a : b;
      const loser = a.status === 200 ? b : a;
      expect(loser.body.message).toContain(winner.body.status);
      expect((await app.request('GET', `/orders/${order.id}`, { token: admin })).body.status).toBe(winner.body.status);
    }
  });

  test('many identical racing updates: exactly one wins', async () => {
    const order = await orderIn('New');
    const results = await Promise.all(Array.from({ length: 6 }, () => put(order.id, 'Processing')));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
  });

  describe('the conditional write itself', () => {
    let repo: OrderRepository;
    beforeAll(() => {
      const client = new DynamoDBClient({
        endpoint: app.endpoints.dynamodb,
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
      });
      repo = new OrderRepository(DynamoDBDocumentClient.from(client), app.tableName);
    });

    test('a write that expects a status the order no longer has is refused', async () => {
      const order = await orderIn('New');
      const now = new Date().toISOString();
      const first = await repo.changeStatus(order.id, 'New', 'Processing', now);
      const second = await repo.changeStatus(order.id, 'New', 'Cancelled', now);
      expect(first).toMatchObject({ outcome: 'changed', order: { status: 'Processing' } });
      expect(second).toEqual({ outcome: 'stale' });
      expect((await repo.get(order.id, true))?.status).toBe('Processing');
      expect(await repo.changeStatus(createId(), 'New', 'Processing', now)).toEqual({ outcome: 'stale' });
    });

    test('an update that read the old status and lost the race is a 409 naming the status it lost to', async () => {
      const order = await orderIn('Processing');
      // The rival's write lands between this update's read and its write.
      class Interleaved extends OrderRepository {
        override async changeStatus(id: string, expected: OrderStatus, to: OrderStatus, now: string) {
          await repo.changeStatus(id, 'Processing', 'Shipped', now);
          return super.changeStatus(id, expected, to, now);
        }
      }
      const client = new DynamoDBClient({
        endpoint: app.endpoints.dynamodb,
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
      });
      const interleaved = new Interleaved(DynamoDBDocumentClient.from(client), app.tableName);
      // Processing → Cancelled is allowed on its own; it is the lost race that refuses it.
      const error = await changeOrderStatus(
        { orders: interleaved, clock: systemClock },
        { id: order.id, status: 'Cancelled', user: { id: 'an-admin', role: 'admin' } },
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConflictError);
      expect((error as ConflictError).message).toBe(
        'Order status changed from Processing to Shipped while this update ran; Cancelled was not applied (current status: Shipped)',
      );
      expect((await repo.get(order.id, true))?.status).toBe('Shipped');
    });
  });
});
