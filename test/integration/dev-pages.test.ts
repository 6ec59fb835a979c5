import { readFile } from 'node:fs/promises';
import { OPENAPI_PATH } from '#infra/openapi.ts';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { rawRequest } from '#test/helpers/raw-request.ts';

// The local gateway's pages beside the API (infra/local/dev-pages.ts): the playground, the
// reference, the OpenAPI document and the local IdP's browser sign-in.

let app: TestApp;
let origin: string;
beforeAll(async () => {
  app = await startTestApp({ pollers: false });
  origin = new URL(app.url).origin;
});
afterAll(() => app?.stop());

test('GET /api/v1/openapi.json is the committed document with this gateway as its first server', async () => {
  const res = await fetch(`${app.url}/openapi.json`);
  expect(res.status).toBe(200);
  const served = (await res.json()) as any;
  const committed = JSON.parse(await readFile(OPENAPI_PATH, 'utf8'));
  expect(served.servers[0].url).toBe(app.url);
  expect({ ...served, servers: committed.servers }).toEqual(committed);
});

test.each([
  ['/', 'text/html', 'Playground'],
  ['/playground.js', 'text/javascript', 'signIn'],
  ['/stream.js', 'text/javascript', 'readEvents'],
  ['/chat.css', 'text/css', '.rate'],
  ['/docs', 'text/html', 'SwaggerUIBundle'],
  ['/docs/swagger-ui-bundle.js', 'text/javascript', 'SwaggerUIBundle'],
  ['/docs/swagger-ui.css', 'text/css', '.swagger-ui'],
])('GET %s serves %s', async (path, type, text) => {
  const res = await fetch(`${origin}${path}`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain(type);
  expect(await res.text()).toContain(text);
});

test('every module the page imports, from its entry down, is served as JavaScript; its stylesheets as CSS', async () => {
  const page = await (await fetch(`${origin}/`)).text();
  const scripts = [...page.matchAll(/<script type="module" src="([^"]+)"/g)].map((m) => m[1]!);
  const sheets = [...page.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((m) => m[1]!);
  expect(scripts).toEqual(['/playground.js']);
  expect(sheets.length).toBeGreaterThan(0);
  const seen = new Set<string>();
  const queue = [...scripts];
  for (let path = queue.shift(); path; path = queue.shift()) {
    if (seen.has(path)) continue;
    seen.add(path);
    const res = await fetch(`${origin}${path}`);
    expect([path, res.status, res.headers.get('content-type')]).toEqual([path, 200, 'text/javascript; charset=utf-8']);
    for (const m of (await res.text()).matchAll(/^import [^;]* from '\.\/([a-z-]+\.js)';$/gm)) queue.push(`/${m[1]}`);
  }
  // The entry and the views it imports (each view its own module).
  expect(seen.size).toBeGreaterThan(5);
  for (const sheet of sheets) {
    const res = await fetch(`${origin}${sheet}`);
    expect([sheet, res.status, res.headers.get('content-type')]).toEqual([sheet, 200, 'text/css; charset=utf-8']);
  }
});

test('a path that would leave the playground folder is refused, however it is spelled', async () => {
  // Sent byte for byte (fetch would normalise `..` away before the gateway saw it).
  for (const path of [
    '/../package.json',
    '/../dev-pages.ts',
    '/..%2fdev-pages.ts',
    '/..%5cdev-pages.ts',
    '/%2e%2e/dev-pages.ts',
    '/%2e%2e%2fdev-pages.ts',
    '/playground/../../package.json',
    '/api.js/../../dev-pages.ts',
    '/index.html',
    '/API.js',
    '/.api.js',
  ]) {
    const res = await rawRequest({ method: 'GET', base: origin, path });
    expect([path, res.status]).toEqual([path, 404]);
    expect(res.text).not.toContain('PLAYGROUND_ASSET');
    expect(res.text).not.toContain('chat-orders-pdf-service');
  }
});

test('paths outside the list are not files: 404 as before', async () => {
  for (const path of ['/docs/../package.json', '/docs/index.html', '/playground/../../.data', '/%2e%2e/package.json']) {
    const res = await fetch(`${origin}${path}`);
    expect(res.status).toBe(404);
  }
});

test('POST /local-idp/token issues an ID token that POST /auth accepts', async () => {
  const res = await fetch(`${origin}/local-idp/token`, {
    method: 'POST',
    body: JSON.stringify({ email: 'page@example.com', name: 'Page' }),
  });
  expect(res.status).toBe(200);
  const { idToken } = (await res.json()) as { idToken: string };
  const auth = await app.request('POST', '/auth', { token: idToken });
  expect(auth.status).toBe(201);
  expect(auth.body.data.user).toMatchObject({ email: 'page@example.com', name: 'Page', verified: true });
});

test.each([
  ['not JSON', 'email=x'],
  ['no email', '{}'],
  ['a bad email', '{"email":"nope"}'],
  ['too large', JSON.stringify({ email: 'a@example.com', name: 'x'.repeat(10_000) })],
])('POST /local-idp/token with %s is 400', async (_, body) => {
  const res = await fetch(`${origin}/local-idp/token`, { method: 'POST', body });
  expect(res.status).toBe(400);
  expect(((await res.json()) as any).message).toEqual(expect.any(String));
});

test('GET /local-idp/token is 405', async () => {
  expect((await fetch(`${origin}/local-idp/token`)).status).toBe(405);
});
