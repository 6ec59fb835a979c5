import { decodeJwt } from 'jose';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { rawRequest, type RawResponse } from '#test/helpers/raw-request.ts';

// `npm start` on a developer's machine against the web pages they visit: a page that rebinds its
// own name to 127.0.0.1 (DNS rebinding) sends its name as Host, so the gateway answers only to
// this machine's names at its own port (421); a page of another site can post without reading
// the answer, so state-changing requests a browser marks as cross-site are refused (403); and the
// local sign-in, which mints a verified token for any email (the admin's too), answers only pages
// of the gateway's own origin, or no browser at all (curl), and never with CORS.

const ADMIN = 'admin@example.com';
let app: TestApp;
let origin: string;
let port: number;
let token: string;

beforeAll(async () => {
  app = await startTestApp({ pollers: false, env: { ADMIN_EMAILS: ADMIN }, extraHostNames: ['devbox.test'] });
  origin = new URL(app.url).origin;
  port = app.port;
  ({ token } = await app.signIn('developer@example.com'));
});
afterAll(() => app?.stop());

const signIn = (headers: Record<string, string>): Promise<RawResponse> =>
  rawRequest({
    method: 'POST',
    base: origin,
    path: '/local-idp/token',
    // As a browser that loaded the page from `origin` (raw-request connects to 127.0.0.1).
    headers: { host: new URL(origin).host, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ email: ADMIN }),
  });

const createChat = (headers: Record<string, string>): Promise<RawResponse> =>
  rawRequest({
    method: 'POST',
    base: app.url,
    path: '/chat',
    headers: {
      host: new URL(origin).host,
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      ...headers,
    },
    body: JSON.stringify({ name: 'from a page', type: 'text' }),
  });

const chatNames = async () =>
  ((await app.request('GET', '/chat', { token })).body.data as { name: string }[]).map((c) => c.name);

describe('a foreign Host (a rebound name) is answered 421 before anything is served', () => {
  test.each([
    ['POST', '/local-idp/token'],
    ['GET', '/api/v1/openapi.json'],
    ['GET', '/'],
    ['GET', '/local-idp/jwks.json'],
    ['POST', '/api/v1/auth'],
  ])('%s %s', async (method, path) => {
    for (const host of [
      `evil.example:${port}`,
      'evil.example',
      `localhost.evil.example:${port}`,
      `localhost:${port + 1}`,
    ]) {
      const res = await rawRequest({
        method,
        base: origin,
        path,
        headers: { host, 'content-type': 'application/json' },
        ...(method === 'POST' && { body: JSON.stringify({ email: ADMIN }) }),
      });
      expect({ host, status: res.status }).toEqual({ host, status: 421 });
      expect(res.json).toMatchObject({ success: false, statusCode: 421 });
      expect(res.text).not.toContain('idToken');
      expect(res.text).not.toContain('evil.example');
    }
  });

  test('the loopback names and the configured one are served, and the OpenAPI server is the one asked', async () => {
    for (const host of [
      `localhost:${port}`,
      `127.0.0.1:${port}`,
      `[::1]:${port}`,
      `LOCALHOST:${port}`,
      `devbox.test:${port}`,
    ]) {
      const res = await rawRequest({ method: 'GET', base: origin, path: '/api/v1/openapi.json', headers: { host } });
      expect({ host, status: res.status }).toEqual({ host, status: 200 });
      expect(res.json.servers[0].url).toBe(`http://${host.toLowerCase()}/api/v1`);
    }
  });
});

describe('the local sign-in answers only its own origin', () => {
  test.each<[string, () => Record<string, string>]>([
    ['another site', () => ({ origin: 'http://evil.example' })],
    ['another site, rebound to the same port', () => ({ origin: `http://evil.example:${port}` })],
    ['a page beside it on another port', () => ({ origin: `http://localhost:${port + 1}` })],
    ['a sandboxed frame', () => ({ origin: 'null' })],
    ['a cross-site fetch without an Origin', () => ({ 'sec-fetch-site': 'cross-site' })],
    ['a same-site page', () => ({ 'sec-fetch-site': 'same-site' })],
  ])('%s: 403, no token', async (_, headers) => {
    const res = await signIn(headers());
    expect(res.status).toBe(403);
    expect(res.json).toMatchObject({ success: false, statusCode: 403 });
    expect(res.text).not.toContain('idToken');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  test.each<[string, () => Record<string, string>]>([
    ['curl (no Origin, no Sec-Fetch-*)', () => ({})],
    ['the playground (its own origin)', () => ({ origin, 'sec-fetch-site': 'same-origin' })],
  ])('%s: a token, without CORS', async (_, headers) => {
    const res = await signIn(headers());
    expect(res.status).toBe(200);
    expect(decodeJwt(res.json.idToken).email).toBe(ADMIN);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  test('its preflight grants nothing', async () => {
    const res = await rawRequest({
      method: 'OPTIONS',
      base: origin,
      path: '/local-idp/token',
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('state-changing API requests from another site are refused', () => {
  test.each([
    ['a foreign Origin', { origin: 'http://evil.example' }],
    ['Origin: null', { origin: 'null' }],
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site' }],
    ['both', { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }],
  ])('%s: 403 and nothing is created', async (_, headers) => {
    const before = await chatNames();
    const res = await createChat(headers);
    expect(res.status).toBe(403);
    expect(res.json).toMatchObject({ success: false, statusCode: 403 });
    expect(await chatNames()).toEqual(before);
  });

  test.each<[string, () => Record<string, string>]>([
    ['curl (no Origin)', () => ({})],
    ['the playground', () => ({ origin, 'sec-fetch-site': 'same-origin' })],
    ['a dev server beside it', () => ({ origin: `http://localhost:${port + 1}`, 'sec-fetch-site': 'same-site' })],
    ['a page of the configured name', () => ({ origin: 'http://devbox.test:5173', 'sec-fetch-site': 'same-site' })],
  ])('%s: served', async (_, headers) => {
    const res = await createChat(headers());
    expect(res.status).toBe(201);
  });

  test('reads from another site still get their answer (a token is needed, and CORS is the API’s)', async () => {
    const res = await rawRequest({
      method: 'GET',
      base: app.url,
      path: '/chat',
      headers: { authorization: `Bearer ${token}`, origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    expect(res.status).toBe(200);
  });
});
