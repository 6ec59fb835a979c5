import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac, createPublicKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { postSse } from '#test/helpers/sse.ts';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '#infra/local/emulators.ts';
import { LOCAL_IDP_AUDIENCE, LOCAL_IDP_ISSUER, LOCAL_IDP_JWKS_PATH, localSubject } from '#infra/local/local-idp.ts';
import { errorShapeProblem, fillPath, routesUnderTest, type RouteUnderTest } from './routes-under-test.ts';
import { validBody } from './fuzz-inputs.ts';

// Token attacks on every protected route of the manifest (test/integration/auth.test.ts covers
// the catalogue against GET /chat and GET /orders; here a compact set reaches every route, so
// no route can be wired without authentication), plus the header tricks on POST /auth that
// suite does not try: an embedded `jwk`, a `jku` pointing elsewhere, HS256 keyed with the PEM,
// a `kid` that is not the provider's, `crit`, unencoded payloads.

let app: TestApp;
let routes: RouteUnderTest[];
let secret: Uint8Array;
let holder: { token: string; id: string; ids: Record<string, string> };
let ghost: { token: string; id: string };
let idpJwk: JWK & { kid: string };
const ISSUER = 'chat-orders-pdf-service';
const AUDIENCE = 'chat-orders-pdf-service-api';

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  app = await startTestApp({
    pollers: false,
    env: { ADMIN_EMAILS: 'holder@example.com', PDF_ALLOW_LOOPBACK: 'false', PDF_SYNC_WAIT_MS: '0' },
  });
  routes = await routesUnderTest();
  secret = new TextEncoder().encode(await readFile(join(app.dataDir, 'service-jwt-secret'), 'utf8'));
  // The holder is an admin, so every route would answer a valid token with something else than 401.
  const h = await app.signIn('holder@example.com');
  const post = async (path: string, body: unknown) => (await app.request('POST', path, { token: h.token, body })).body;
  const chat = (await post('/chat', { type: 'text' })).data;
  const product = await post('/products', { name: 'P', priceCents: 1, currency: 'EUR' });
  const order = await post('/orders', { items: [{ productId: product.id, quantity: 1 }] });
  const file = (await post('/upload', { fileName: 'f.pdf', contentType: 'application/pdf', size: 10 })).data;
  const streamed = await postSse(`${app.url}/message/logged-in`, h.token, {
    chatId: chat.id,
    prompt: 'hi',
    stream: true,
  });
  const { messageId } = streamed.named('start')[0];
  const { exportId } = (await app.request('POST', '/me/export', { token: h.token })).body.data;
  const collection = (await post('/collections', { name: 'C' })).data;
  const apiKey = (await post('/me/api-keys', { name: 'K' })).data;
  holder = {
    token: h.token,
    id: h.user.id,
    ids: {
      chatId: chat.id,
      messageId,
      fileId: file.fileId,
      orders: order.id,
      products: product.id,
      productId: product.id,
      exportId,
      collections: collection.id,
      collectionId: collection.id,
      'api-keys': apiKey.id,
      page: '1',
      part: '1',
      // Any well-formed id: the routes refuse the token before they look.
      webhookId: 'w4e8b2h6k1m5n9p3q7r0s4tv',
    },
  };

  const g = await app.signIn('ghost@example.com');
  ghost = { token: g.token, id: g.user.id };
  const db = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: app.endpoints.dynamodb, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS }),
  );
  await db.send(new DeleteCommand({ TableName: app.tableName, Key: { PK: `USER#${ghost.id}`, SK: 'PROFILE' } }));
  db.destroy();

  const origin = new URL(app.url).origin;
  idpJwk = ((await (await fetch(`${origin}${LOCAL_IDP_JWKS_PATH}`)).json()) as { keys: (JWK & { kid: string })[] })
    .keys[0]!;
});
afterAll(async () => {
  await app?.stop();
  console.log(
    `Token attacks: ${tally.protected} requests (${attacks.length} bad service tokens × ${protectedRoutes().length} protected routes), ${tally.idp} bad ID tokens on POST /auth; all 401`,
  );
});
const tally = { protected: 0, idp: 0 };

/** The routes a service token opens (POST /auth takes an ID token; a public route takes none). */
const protectedRoutes = () => routes.filter((r) => r.auth === 'user' || r.auth === 'admin');

/** A service token signed with the real secret, claims adjustable. */
function serviceToken(
  o: {
    alg?: 'HS256' | 'HS384' | 'HS512';
    key?: Uint8Array;
    sub?: string;
    iss?: string;
    aud?: string;
    exp?: number;
    nbf?: number;
    iat?: number;
    header?: object;
    drop?: string[];
  } = {},
) {
  const claims: Record<string, unknown> = {
    role: 'admin',
    sub: o.sub ?? holder.id,
    iss: o.iss ?? ISSUER,
    aud: o.aud ?? AUDIENCE,
    iat: o.iat ?? now() - 10,
    exp: o.exp ?? now() + 3600,
  };
  if (o.nbf !== undefined) claims.nbf = o.nbf;
  for (const k of o.drop ?? []) delete claims[k];
  return new SignJWT(claims).setProtectedHeader({ alg: o.alg ?? 'HS256', ...o.header }).sign(o.key ?? secret);
}

/** Header and payload as given, signed with HMAC-SHA256 under `key` (for headers jose will not write). */
function handMade(header: object, payload: object, key: Uint8Array | string = secret) {
  const signingInput = `${b64(header)}.${b64(payload)}`;
  return `${signingInput}.${createHmac('sha256', key).update(signingInput).digest('base64url')}`;
}

const validClaims = () => ({
  sub: holder.id,
  role: 'admin',
  iss: ISSUER,
  aud: AUDIENCE,
  iat: now() - 10,
  exp: now() + 3600,
});

const attacks: [string, () => Promise<string>][] = [
  ['alg: none', async () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(validClaims())}.`],
  [
    'alg: NONE with the real signature',
    async () => {
      const [, p, s] = (await serviceToken()).split('.');
      return `${b64({ alg: 'NONE' })}.${p}.${s}`;
    },
  ],
  [
    'RS256 signed with an attacker key, the key embedded as jwk',
    async () => {
      const { privateKey, publicKey } = await generateKeyPair('RS256');
      return new SignJWT(validClaims())
        .setProtectedHeader({ alg: 'RS256', jwk: await exportJWK(publicKey) })
        .sign(privateKey);
    },
  ],
  ['HS384 with the right secret (algorithm not pinned)', () => serviceToken({ alg: 'HS384' })],
  ['the wrong key', () => serviceToken({ key: new TextEncoder().encode('k'.repeat(48)) })],
  ['expired', () => serviceToken({ exp: now() - 1 })],
  ['not yet valid', () => serviceToken({ nbf: now() + 600 })],
  ['the wrong issuer', () => serviceToken({ iss: LOCAL_IDP_ISSUER })],
  ['the wrong audience', () => serviceToken({ aud: LOCAL_IDP_AUDIENCE })],
  ['no exp', () => serviceToken({ drop: ['exp'] })],
  ['no sub', () => serviceToken({ drop: ['sub'] })],
  ['exp as a string', async () => handMade({ alg: 'HS256' }, { ...validClaims(), exp: String(now() + 3600) })],
  ['an unknown crit header', async () => handMade({ alg: 'HS256', crit: ['x-custom'], 'x-custom': 1 }, validClaims())],
  [
    'an unencoded payload (b64: false)',
    async () => handMade({ alg: 'HS256', b64: false, crit: ['b64'] }, validClaims()),
  ],
  ['truncated', async () => (await serviceToken()).slice(0, -6)],
  ['signature stripped', async () => `${(await serviceToken()).split('.').slice(0, 2).join('.')}.`],
  [
    'payload swapped to another subject, signature kept',
    async () => {
      const [h, , s] = (await serviceToken()).split('.');
      return `${h}.${b64({ ...validClaims(), sub: 'someone-else' })}.${s}`;
    },
  ],
  ['an ID token of the identity provider', () => app.idToken({ email: 'holder@example.com' })],
  ['a token of a deleted user', async () => ghost.token],
  // API keys (`cops_<id>_<secret>`): one that was never issued, and the holder's real one with its secret altered.
  ['a made-up API key', async () => `cops_${'a'.repeat(24)}_${'b'.repeat(43)}`],
  ['the holder’s API key with its secret altered', async () => `cops_${holder.ids['api-keys']}_${'c'.repeat(43)}`],
];

/** A request that would succeed (or fail for another reason than the token) with a good token. */
function requestFor(route: RouteUnderTest) {
  // `{id}` is named by the segment before it (/collections/{id}, /me/api-keys/{id}).
  const segments = route.path.split('/');
  const kind = (p: string) => (p === 'id' ? segments[segments.indexOf('{id}') - 1]! : p);
  const path = fillPath(route.path, Object.fromEntries(route.params.map((p) => [p, holder.ids[kind(p)] ?? ''])));
  const body =
    route.name === 'update-order'
      ? { status: 'Processing' }
      : validBody(route, { ...holder.ids, url: 'http://127.0.0.1:9/x.pdf' });
  return { path, body };
}

test.each(attacks.map(([name]) => [name]))(
  '%s → 401 on every protected route, in the route’s body shape',
  async (name) => {
    const token = await attacks.find(([n]) => n === name)![1]();
    const problems: string[] = [];
    await Promise.all(
      protectedRoutes().map(async (route) => {
        const { path, body } = requestFor(route);
        const res = await app.request(route.method, path, { token, ...(body !== undefined && { body }) });
        tally.protected++;
        const shape = errorShapeProblem(route.shape, res.status, res.body);
        if (res.status !== 401 || shape)
          problems.push(`${route.name}: ${res.status} ${res.text.slice(0, 160)} ${shape ?? ''}`);
        else if (res.headers.get('www-authenticate') !== 'Bearer')
          problems.push(`${route.name}: no WWW-Authenticate: Bearer`);
      }),
    );
    expect(problems).toEqual([]);
  },
);

test('no token at all, or another scheme, is 401 on every protected route', async () => {
  for (const headers of [
    {} as Record<string, string>,
    { authorization: `Basic ${Buffer.from('holder:pw').toString('base64')}` },
    { authorization: holder.token },
  ]) {
    for (const route of protectedRoutes()) {
      const { path, body } = requestFor(route);
      const res = await app.request(route.method, path, { headers, ...(body !== undefined && { body }) });
      tally.protected++;
      expect([route.name, res.status, errorShapeProblem(route.shape, res.status, res.body)]).toEqual([
        route.name,
        401,
        undefined,
      ]);
    }
  }
});

test('the control: the holder’s real token passes authentication on every protected route', async () => {
  // Run last among the service-token tests: it really performs each request (deletes included),
  // DELETE /me last of all (it erases the holder).
  const routes = protectedRoutes();
  const last = (r: { name: string }) => (r.name === 'delete-me' ? 1 : 0);
  for (const route of [...routes].sort((a, b) => last(a) - last(b))) {
    const { path, body } = requestFor(route);
    const res = await app.request(route.method, path, { token: holder.token, ...(body !== undefined && { body }) });
    expect([route.name, res.status === 401 || res.status === 403]).toEqual([route.name, false]);
  }
});

describe('POST /auth: header tricks on the ID token', () => {
  const person = () => ({
    email: 'mallory@example.com',
    email_verified: true,
    user_id: localSubject('mallory@example.com'),
    sub: localSubject('mallory@example.com'),
    iss: LOCAL_IDP_ISSUER,
    aud: LOCAL_IDP_AUDIENCE,
    iat: now() - 5,
    exp: now() + 600,
  });

  let jwksHits = 0;
  let jwksServer: http.Server;
  let jwksUrl: string;
  let attacker: Awaited<ReturnType<typeof generateKeyPair>>;
  beforeAll(async () => {
    attacker = await generateKeyPair('RS256', { extractable: true });
    const publicJwk = { ...(await exportJWK(attacker.publicKey)), kid: idpJwk.kid, alg: 'RS256', use: 'sig' };
    jwksServer = http.createServer((_req, res) => {
      jwksHits++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [publicJwk] }));
    });
    await new Promise<void>((r) => jwksServer.listen(0, '127.0.0.1', r));
    jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks.json`;
  });
  afterAll(() => new Promise<void>((r) => jwksServer.close(() => r())));

  const signAttacker = (header: object) =>
    new SignJWT(person()).setProtectedHeader({ alg: 'RS256', ...header }).sign(attacker.privateKey);
  const pem = () =>
    createPublicKey({ key: idpJwk as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' }) as string;

  const cases: [string, () => Promise<string>][] = [
    [
      'an attacker key embedded as jwk, with the provider’s kid',
      async () => signAttacker({ kid: idpJwk.kid, jwk: await exportJWK(attacker.publicKey) }),
    ],
    ['jku pointing at an attacker JWKS (loopback)', () => signAttacker({ kid: idpJwk.kid, jku: jwksUrl })],
    ['x5u pointing at an attacker URL', () => signAttacker({ kid: idpJwk.kid, x5u: jwksUrl })],
    [
      'HS256 keyed with the provider’s public key as PEM',
      async () => handMade({ alg: 'HS256', kid: idpJwk.kid }, person(), pem()),
    ],
    [
      'HS256 keyed with the provider’s modulus',
      async () => handMade({ alg: 'HS256', kid: idpJwk.kid }, person(), String(idpJwk.n)),
    ],
    ['a kid the provider does not publish', () => signAttacker({ kid: 'not-a-key' })],
    ['a kid with a path', () => signAttacker({ kid: '../../../../dev/null' })],
    [
      'ES256 with an attacker key and the provider’s kid',
      async () => {
        const ec = await generateKeyPair('ES256');
        return new SignJWT(person()).setProtectedHeader({ alg: 'ES256', kid: idpJwk.kid }).sign(ec.privateKey);
      },
    ],
    ['alg None (mixed case)', async () => `${b64({ alg: 'None', kid: idpJwk.kid })}.${b64(person())}.`],
    ['RS256 with an empty signature', async () => `${b64({ alg: 'RS256', kid: idpJwk.kid })}.${b64(person())}.`],
    [
      'a payload changed under the provider’s real signature',
      async () => {
        const [h, , s] = (await app.idToken({ email: 'holder@example.com' })).split('.');
        return `${h}.${b64(person())}.${s}`;
      },
    ],
  ];

  test.each(cases.map(([n]) => [n]))('%s → 401, and no user is created', async (name) => {
    const token = await cases.find(([n]) => n === name)![1]();
    const res = await app.request('POST', '/auth', { token });
    tally.idp++;
    expect(res.status).toBe(401);
    expect(errorShapeProblem('envelope', 401, res.body)).toBeUndefined();
    expect(res.text).not.toMatch(/mallory/);
  });

  test('the attacker’s JWKS was never fetched, and mallory can still sign in for real afterwards (201: she did not exist)', async () => {
    expect(jwksHits).toBe(0);
    const real = await app.request('POST', '/auth', { token: await app.idToken({ email: 'mallory@example.com' }) });
    expect(real.status).toBe(201);
  });
});
