import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { importJWK, SignJWT, type JWK } from 'jose';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '#infra/local/emulators.ts';
import { LOCAL_IDP_AUDIENCE, LOCAL_IDP_ISSUER, localSubject } from '#infra/local/local-idp.ts';
import { errorShapeProblem } from './routes-under-test.ts';

// Who may become admin, whether a withdrawn admin role still acts, and ID
// token claims the service must not trust (an `iat` in the future, a non-http(s) picture).
// The ID tokens are signed with the local identity provider's real key, claims set by hand.

let app: TestApp;
let db: DynamoDBDocumentClient;
let signId: (claims: Record<string, unknown>) => Promise<string>;
const ADMIN = 'boss@example.com';
const FORMER_ADMIN = 'former-boss@example.com';
const now = () => Math.floor(Date.now() / 1000);
const tally = { requests: 0 };

beforeAll(async () => {
  app = await startTestApp({ pollers: false, env: { ADMIN_EMAILS: ADMIN } });
  db = DynamoDBDocumentClient.from(
    new DynamoDBClient({ endpoint: app.endpoints.dynamodb, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS }),
  );
  const { kid, privateJwk } = JSON.parse(
    await readFile(join(app.dataDir, 'local-idp-key.json'), 'utf8').catch(async () => {
      await app.idToken({ email: 'warm-up@example.com' }); // creates the key
      return readFile(join(app.dataDir, 'local-idp-key.json'), 'utf8');
    }),
  ) as { kid: string; privateJwk: JWK };
  const key = await importJWK(privateJwk, 'RS256');
  signId = (claims) => {
    const email = String(claims.email);
    return new SignJWT({
      sub: localSubject(email),
      user_id: localSubject(email),
      iss: LOCAL_IDP_ISSUER,
      aud: LOCAL_IDP_AUDIENCE,
      iat: now(),
      exp: now() + 600,
      ...claims,
    })
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
      .sign(key);
  };
});
afterAll(async () => {
  db?.destroy();
  await app?.stop();
  console.log(`Roles and ID-token claims: ${tally.requests} hostile requests, each refused or downgraded`);
});

const signInWith = async (idToken: string) => {
  tally.requests++;
  return app.request('POST', '/auth', { token: idToken });
};
const createProduct = (token: string) =>
  app.request('POST', '/products', { token, body: { name: 'Crown', priceCents: 100, currency: 'EUR' } });

describe('item 1: only a verified email may be admin', () => {
  test('an ADMIN_EMAILS address with email_verified false signs in as a user and cannot create products', async () => {
    const res = await signInWith(await signId({ email: ADMIN, email_verified: false }));
    expect(res.status).toBe(201);
    expect(res.body.data.user).toMatchObject({ email: ADMIN, verified: false, role: 'user' });
    const refused = await createProduct(res.body.data.token);
    expect(refused.status).toBe(403);
    expect(errorShapeProblem('bare', 403, refused.body)).toBeUndefined();
  });

  test('the same address, once verified, is admin (the control)', async () => {
    const res = await signInWith(await signId({ email: ADMIN, email_verified: true }));
    expect(res.body.data.user).toMatchObject({ email: ADMIN, verified: true, role: 'admin' });
    expect((await createProduct(res.body.data.token)).status).toBe(201);
  });

  test('an email_verified claim that is absent counts as unverified', async () => {
    const res = await signInWith(await signId({ email: ADMIN.toUpperCase() }));
    expect(res.body.data.user).toMatchObject({ verified: false, role: 'user' });
  });
});

describe('item 2: a withdrawn admin role stops acting at once', () => {
  // The state a deployment is in after FORMER_ADMIN was removed from ADMIN_EMAILS: the user
  // signed in while listed (stored role admin, a 30-day token saying admin), and the
  // configuration no longer lists the email. The token is a real one from POST /auth.
  let token: string;
  let userId: string;
  let productId: string; // what the orders below are of (an order needs an item)
  beforeAll(async () => {
    const admin = await app.request('POST', '/auth', { token: await signId({ email: ADMIN, email_verified: true }) });
    productId = (await createProduct(admin.body.data.token)).body.id;
    const res = await signInWith(await signId({ email: FORMER_ADMIN, email_verified: true }));
    ({ token } = res.body.data);
    userId = res.body.data.user.id;
    // Signed in as a user (not listed now); make the record and token what they were while listed.
    await db.send(
      new UpdateCommand({
        TableName: app.tableName,
        Key: { PK: `USER#${userId}`, SK: 'PROFILE' },
        UpdateExpression: 'SET #r = :admin',
        ExpressionAttributeNames: { '#r': 'role' },
        ExpressionAttributeValues: { ':admin': 'admin' },
      }),
    );
    const secret = new TextEncoder().encode(await readFile(join(app.dataDir, 'service-jwt-secret'), 'utf8'));
    token = await new SignJWT({ role: 'admin' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(userId)
      .setIssuer(app.config.SERVICE_JWT_ISSUER)
      .setAudience(app.config.SERVICE_JWT_AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(now() + 30 * 24 * 3600)
      .sign(secret);
  });

  test('admin writes answer 403', async () => {
    tally.requests += 2;
    const created = await createProduct(token);
    expect(created.status).toBe(403);
    expect(errorShapeProblem('bare', 403, created.body)).toBeUndefined();
    expect(created.body.message).toMatch(/admin role: admins are the emails in the ADMIN_EMAILS setting/);
    const order = (await app.request('POST', '/orders', { token, body: { items: [{ productId, quantity: 1 }] } })).body;
    const moved = await app.request('PUT', `/orders/${order.id}`, { token, body: { status: 'Processing' } });
    expect(moved.status).toBe(403);
  });

  test('reads act as a user: GET /orders lists only the caller’s own orders', async () => {
    const stranger = await app.signIn('stranger-with-orders@example.com');
    const theirs = (
      await app.request('POST', '/orders', { token: stranger.token, body: { items: [{ productId, quantity: 1 }] } })
    ).body;
    tally.requests++;
    const listed = await app.request('GET', '/orders?limit=100', { token });
    expect(listed.status).toBe(200);
    const owners = new Set((listed.body as { userId: string }[]).map((o) => o.userId));
    expect(listed.body.map((o: { id: string }) => o.id)).not.toContain(theirs.id);
    expect([...owners]).toEqual([userId]);
  });

  test('the stored record is left alone; the next sign-in makes it a user (and a real admin keeps acting)', async () => {
    const stored = await db.send(
      new GetCommand({ TableName: app.tableName, Key: { PK: `USER#${userId}`, SK: 'PROFILE' } }),
    );
    expect(stored.Item?.role).toBe('admin');
    const again = await signInWith(await signId({ email: FORMER_ADMIN, email_verified: true }));
    expect(again.body.data.user.role).toBe('user');
    const boss = await signInWith(await signId({ email: ADMIN, email_verified: true }));
    expect((await createProduct(boss.body.data.token)).status).toBe(201);
  });
});

describe('item 3: ID-token claims', () => {
  test.each([
    ['an hour ahead', 3600],
    ['two minutes ahead', 120],
  ])('an iat %s is refused with 401 and no user is created', async (_name, ahead) => {
    const email = `future-${ahead}@example.com`;
    const res = await signInWith(
      await signId({ email, email_verified: true, iat: now() + ahead, exp: now() + ahead + 600 }),
    );
    expect(res.status).toBe(401);
    expect(errorShapeProblem('envelope', 401, res.body)).toBeUndefined();
    const identity = await db.send(
      new GetCommand({
        TableName: app.tableName,
        Key: { PK: `IDP#${localSubject(email)}`, SK: 'IDENTITY' },
        ConsistentRead: true,
      }),
    );
    expect(identity.Item).toBeUndefined();
  });

  test('an iat within the clock skew is accepted', async () => {
    const res = await signInWith(await signId({ email: 'skewed@example.com', email_verified: true, iat: now() + 10 }));
    expect(res.status).toBe(201);
  });

  test.each([
    'javascript:alert(document.cookie)',
    'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
    'JavaScript://example.com/%0aalert(1)',
    'file:///etc/passwd',
    'ftp://example.com/me.png',
    'vbscript:msgbox(1)',
    'not a url',
    42,
  ])('a picture %p is not stored (sign-in still works)', async (picture) => {
    const email = `picture-${Math.random().toString(36).slice(2)}@example.com`;
    const res = await signInWith(await signId({ email, email_verified: true, picture }));
    expect(res.status).toBe(201);
    expect(res.body.data.user.picture).toBeNull();
    const stored = await db.send(
      new GetCommand({ TableName: app.tableName, Key: { PK: `USER#${res.body.data.user.id}`, SK: 'PROFILE' } }),
    );
    expect(stored.Item?.picture).toBeNull();
  });

  test('an http(s) picture is stored, and a later bad one replaces it with null', async () => {
    const email = 'pictured@example.com';
    const first = await signInWith(
      await signId({ email, email_verified: true, picture: 'https://cdn.example.com/me.png' }),
    );
    expect(first.body.data.user.picture).toBe('https://cdn.example.com/me.png');
    const second = await signInWith(await signId({ email, email_verified: true, picture: 'javascript:alert(1)' }));
    expect(second.status).toBe(200);
    expect(second.body.data.user.picture).toBeNull();
  });
});
