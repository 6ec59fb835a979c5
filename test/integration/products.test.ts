import { createId } from '#shared/ids.ts';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { until } from '#test/helpers/until.ts';
import { fieldError, ISO, justCreated } from '#test/helpers/response-bodies.ts';

// Products over real HTTP: admin writes, reads for any signed-in user, validation, paging.
// Product routes answer bare bodies and `{ message, errors? }` errors.

let app: TestApp;
let admin: string;
let user: string;

beforeAll(async () => {
  app = await startTestApp({ env: { ADMIN_EMAILS: 'admin@example.com' } });
  [admin, user] = await Promise.all([
    app.signIn('admin@example.com').then((s) => s.token),
    app.signIn('user@example.com').then((s) => s.token),
  ]);
});
afterAll(() => app?.stop());

async function create(body: Record<string, unknown>) {
  const res = await app.request('POST', '/products', { token: admin, body });
  expect(res.status).toBe(201);
  return res.body;
}

describe('POST /products', () => {
  test('an admin creates a product: 201 with the bare product', async () => {
    const res = await app.request('POST', '/products', {
      token: admin,
      body: { name: '  Desk lamp ', description: 'Brass, 40 cm', priceCents: 4999, currency: 'EUR' },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      ...justCreated(res.body),
      name: 'Desk lamp',
      description: 'Brass, 40 cm',
      priceCents: 4999,
      currency: 'EUR',
    });
    expect(res.body.success).toBeUndefined(); // bare, not the envelope
    const read = await app.request('GET', `/products/${res.body.id}`, { token: user });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
  });

  test('description is optional; a zero price is allowed', async () => {
    const p = await create({ name: 'Free sample', priceCents: 0, currency: 'USD' });
    expect(p).toMatchObject({ description: '', priceCents: 0 });
  });

  test('a user is refused with 403', async () => {
    const res = await app.request('POST', '/products', {
      token: user,
      body: { name: 'x', priceCents: 1, currency: 'EUR' },
    });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: expect.stringContaining('admin') });
  });

  test('no token is 401 with { message }', async () => {
    const res = await app.request('POST', '/products', { body: { name: 'x', priceCents: 1, currency: 'EUR' } });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: expect.any(String) });
  });

  test.each([
    ['a negative price', { name: 'x', priceCents: -1, currency: 'EUR' }, 'body.priceCents'],
    ['a fractional price', { name: 'x', priceCents: 1.5, currency: 'EUR' }, 'body.priceCents'],
    ['a price in a string', { name: 'x', priceCents: '100', currency: 'EUR' }, 'body.priceCents'],
    ['an absurd price', { name: 'x', priceCents: 1e15, currency: 'EUR' }, 'body.priceCents'],
    ['a made-up currency', { name: 'x', priceCents: 1, currency: 'ABC' }, 'body.currency'],
    ['a lower-case currency', { name: 'x', priceCents: 1, currency: 'eur' }, 'body.currency'],
    ['a currency symbol', { name: 'x', priceCents: 1, currency: '€' }, 'body.currency'],
    ['a missing currency', { name: 'x', priceCents: 1 }, 'body.currency'],
    ['an empty name', { name: '   ', priceCents: 1, currency: 'EUR' }, 'body.name'],
    ['a name over 200 characters', { name: 'n'.repeat(201), priceCents: 1, currency: 'EUR' }, 'body.name'],
    [
      'a description over 2000 characters',
      { name: 'x', description: 'd'.repeat(2001), priceCents: 1, currency: 'EUR' },
      'body.description',
    ],
    ['an extra field', { name: 'x', priceCents: 1, currency: 'EUR', stock: 3 }, 'body'],
    ['a client-chosen id', { id: createId(), name: 'x', priceCents: 1, currency: 'EUR' }, 'body'],
  ])('%s is a 400 naming the field', async (_what, body, path) => {
    const res = await app.request('POST', '/products', { token: admin, body });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(fieldError(path));
  });

  test('malformed JSON is a 400 with { message, errors }', async () => {
    const res = await app.request('POST', '/products', {
      token: admin,
      rawBody: '{"name": "x",',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: 'Malformed JSON body', errors: [expect.objectContaining({ path: 'body' })] });
  });
});

describe('GET /products/{id}', () => {
  test('any signed-in user reads a product; unknown id is 404; a bad id is 400; no token 401', async () => {
    const p = await create({ name: 'Mug', priceCents: 1200, currency: 'GBP' });
    for (const token of [user, admin]) {
      const res = await app.request('GET', `/products/${p.id}`, { token });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(p);
    }
    const missing = await app.request('GET', `/products/${createId()}`, { token: user });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: 'Product not found' });
    const bad = await app.request('GET', '/products/not-a-cuid', { token: user });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([expect.objectContaining({ path: 'params.id' })]);
    expect((await app.request('GET', `/products/${p.id}`)).status).toBe(401);
  });
});

describe('PATCH /products/{id}', () => {
  test('an admin changes some fields; the others stay; updatedAt moves', async () => {
    const p = await create({ name: 'Chair', description: 'Oak', priceCents: 8000, currency: 'EUR' });
    await until('the clock to pass the creation time', () => new Date().toISOString() > p.updatedAt); // so updatedAt can move
    const res = await app.request('PATCH', `/products/${p.id}`, {
      token: admin,
      body: { priceCents: 7500, currency: 'CHF' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...p, priceCents: 7500, currency: 'CHF', updatedAt: expect.stringMatching(ISO) });
    expect(res.body.updatedAt > p.updatedAt).toBe(true);
    expect((await app.request('GET', `/products/${p.id}`, { token: user })).body).toEqual(res.body);
  });

  test('a user is refused with 403 and nothing changes', async () => {
    const p = await create({ name: 'Table', priceCents: 20000, currency: 'EUR' });
    const res = await app.request('PATCH', `/products/${p.id}`, { token: user, body: { priceCents: 1 } });
    expect(res.status).toBe(403);
    expect((await app.request('GET', `/products/${p.id}`, { token: user })).body.priceCents).toBe(20000);
  });

  test.each([
    ['an empty body', {}],
    ['an extra field', { priceCents: 1, stock: 2 }],
    ['a negative price', { priceCents: -5 }],
    ['a bad currency', { currency: 'XYZ' }],
    ['an empty name', { name: '' }],
  ])('%s is a 400', async (_what, body) => {
    const p = await create({ name: 'Shelf', priceCents: 3000, currency: 'EUR' });
    const res = await app.request('PATCH', `/products/${p.id}`, { token: admin, body });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message: expect.any(String), errors: expect.any(Array) });
  });

  test('an unknown id is 404 (and is not created); a bad id is 400', async () => {
    const id = createId();
    const res = await app.request('PATCH', `/products/${id}`, { token: admin, body: { name: 'Ghost' } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: 'Product not found' });
    expect((await app.request('GET', `/products/${id}`, { token: admin })).status).toBe(404);
    expect((await app.request('PATCH', '/products/ABC', { token: admin, body: { name: 'x' } })).status).toBe(400);
  });
});

describe('DELETE /products/{id}', () => {
  test('an admin deletes a product: 204 without a body, then 404', async () => {
    const p = await create({ name: 'Old stock', priceCents: 100, currency: 'EUR' });
    const res = await app.request('DELETE', `/products/${p.id}`, { token: admin });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await app.request('GET', `/products/${p.id}`, { token: user })).status).toBe(404);
    const again = await app.request('DELETE', `/products/${p.id}`, { token: admin });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ message: 'Product not found' });
  });

  test('a user is refused with 403 and the product stays; a bad id is 400; no token 401', async () => {
    const p = await create({ name: 'Keeper', priceCents: 100, currency: 'EUR' });
    expect((await app.request('DELETE', `/products/${p.id}`, { token: user })).status).toBe(403);
    expect((await app.request('GET', `/products/${p.id}`, { token: user })).status).toBe(200);
    expect((await app.request('DELETE', '/products/123', { token: admin })).status).toBe(400);
    expect((await app.request('DELETE', `/products/${p.id}`)).status).toBe(401);
  });
});

describe('GET /products', () => {
  test('lists by name (case-insensitive) in pages of ?limit= with x-next-cursor', async () => {
    const names = ['aaa Zebra', 'AAA apple', 'aaa Mango', 'aaa banana', 'AAA cherry'];
    for (const name of names) await create({ name, priceCents: 10, currency: 'EUR' });
    const expected = ['AAA apple', 'aaa banana', 'AAA cherry', 'aaa Mango', 'aaa Zebra'];

    const seen: string[] = [];
    const ids: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = `?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await app.request('GET', `/products${q}`, { token: user });
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      expect(res.body.length).toBeLessThanOrEqual(2);
      seen.push(...res.body.map((p: { name: string }) => p.name));
      ids.push(...res.body.map((p: { id: string }) => p.id));
      cursor = res.headers.get('x-next-cursor');
      pages++;
    } while (cursor && pages < 50);
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(seen.filter((n) => names.includes(n))).toEqual(expected);
    expect(new Set(ids).size).toBe(ids.length); // no product twice across pages
    expect([...seen].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1))).toEqual(seen);
  });

  test('items carry no table keys', async () => {
    const res = await app.request('GET', '/products?limit=5', { token: admin });
    expect(res.status).toBe(200);
    for (const p of res.body)
      expect(Object.keys(p).sort()).toEqual([
        'createdAt',
        'currency',
        'description',
        'id',
        'name',
        'priceCents',
        'updatedAt',
      ]);
  });

  test('a renamed product moves in the listing', async () => {
    const p = await create({ name: 'zzz last', priceCents: 1, currency: 'EUR' });
    await app.request('PATCH', `/products/${p.id}`, { token: admin, body: { name: '!!! first' } });
    const res = await app.request('GET', '/products?limit=1', { token: user });
    expect(res.body[0]).toMatchObject({ id: p.id, name: '!!! first' });
  });

  test('a bad limit, a forged cursor, an unknown parameter: 400; no token: 401', async () => {
    for (const q of [
      '?limit=0',
      '?limit=101',
      '?limit=abc',
      '?cursor=%%%',
      `?cursor=${Buffer.from('{"PK":"x"}').toString('base64url')}`,
      '?sort=name',
    ]) {
      const res = await app.request('GET', `/products${q}`, { token: user });
      expect([q, res.status]).toEqual([q, 400]);
      expect(res.body).toEqual({ message: expect.any(String), errors: expect.any(Array) });
    }
    expect((await app.request('GET', '/products')).status).toBe(401);
  });
});
