import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createHmac } from 'node:crypto';
import { DeleteCommand, DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { generateKeyPair, SignJWT } from 'jose';
import { startTestApp, type TestApp } from '../helpers/app.ts';

// Sign-in against a loopback JWKS (a custom provider configured with IDP_* settings), and every
// kind of bad token on POST /auth and on protected routes (envelope and bare shapes).

let app: TestApp;
let secret: string;

beforeAll(async () => {
  app = await startTestApp({ idp: true, env: { ADMIN_EMAILS: 'Boss@Example.com' } });
  secret = await readFile(join(app.dataDir, 'service-jwt-secret'), 'utf8');
});
afterAll(() => app?.stop());

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
const person = (n: string) => ({
  sub: `firebase-${n}`,
  user_id: `uid-${n}`,
  email: `${n}@example.com`,
  email_verified: true,
  name: `Person ${n}`,
  picture: 'https://img.example.com/p.png',
});
const auth = (token: string) => app.request('POST', '/auth', { token });

describe('POST /auth', () => {
  test('maps the claims to the User: user_id, email, verified, name, picture, null address', async () => {
    const res = await auth(await app.idp.sign(person('map')));
    expect(res.status).toBe(201);
    expect(res.body.data.user).toEqual({
      id: expect.stringMatching(/^[a-z][a-z0-9]{23}$/),
      email: 'map@example.com',
      role: 'user',
      name: 'Person map',
      address: null,
      picture: 'https://img.example.com/p.png',
      user_id: 'uid-map',
      verified: true,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
  });

  test('a returning user is 200 with name, picture and verified refreshed', async () => {
    const first = await auth(await app.idp.sign({ ...person('back'), email_verified: false }));
    const again = await auth(
      await app.idp.sign({ ...person('back'), name: 'New Name', picture: 'https://img.example.com/new.png' }),
    );
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body.message).toBe('Signed in');
    expect(again.body.data.user).toMatchObject({
      id: first.body.data.user.id,
      name: 'New Name',
      verified: true,
      picture: 'https://img.example.com/new.png',
    });
  });

  test('emails in ADMIN_EMAILS sign in as admin, case-insensitively', async () => {
    const res = await auth(await app.idp.sign({ ...person('boss'), email: 'boss@example.com' }));
    expect(res.body.data.user.role).toBe('admin');
  });

  test('simultaneous first sign-ins of one identity create exactly one user', async () => {
    const token = await app.idp.sign(person('race'));
    const results = await Promise.all(Array.from({ length: 6 }, () => auth(token)));
    const ids = new Set(results.map((r) => r.body.data.user.id));
    expect(results.every((r) => r.status === 200 || r.status === 201)).toBe(true);
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
  });

  test('a token without an email is 401', async () => {
    const { email: _e, ...noEmail } = person('noemail');
    const res = await auth(await app.idp.sign(noEmail));
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, statusCode: 401, message: 'The ID token carries no valid email' });
  });

  describe('refuses bad ID tokens with 401 in the envelope', () => {
    const cases: [string, () => Promise<string | undefined>][] = [
      ['no Authorization header', async () => undefined],
      ['a malformed token', async () => 'not-a-jwt'],
      ['a truncated token', async () => (await app.idp.sign(person('t'))).slice(0, -12)],
      ['an expired token', async () => app.idp.sign(person('t'), { expiresIn: -3600 })],
      ['a token not yet valid', async () => app.idp.sign(person('t'), { notBefore: 3600 })],
      ['the wrong issuer', async () => app.idp.sign(person('t'), { issuer: 'https://evil.test' })],
      ['the wrong audience', async () => app.idp.sign(person('t'), { audience: 'other-app' })],
      [
        'a key the provider does not publish (same kid)',
        async () => app.idp.sign(person('t'), { key: (await generateKeyPair('RS256')).privateKey }),
      ],
      [
        'alg: none',
        async () =>
          `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...person('t'), iss: app.idp.issuer, aud: app.idp.audience, exp: 9e9, iat: 1 })}.`,
      ],
      [
        'HS256 signed with the public key (algorithm confusion)',
        async () => {
          const header = b64({ alg: 'HS256', kid: 'test-key-1' });
          const payload = b64({
            ...person('t'),
            iss: app.idp.issuer,
            aud: app.idp.audience,
            exp: 9e9,
            iat: Math.floor(Date.now() / 1000),
          });
          const sig = createHmac('sha256', JSON.stringify(app.idp.publicJwk))
            .update(`${header}.${payload}`)
            .digest('base64url');
          return `${header}.${payload}.${sig}`;
        },
      ],
      [
        'a service JWT instead of an ID token',
        async () => (await auth(await app.idp.sign(person('svc')))).body.data.token as string,
      ],
    ];
    test.each(cases)('%s', async (_name, make) => {
      const token = await make();
      const res = token === undefined ? await app.request('POST', '/auth') : await auth(token);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ success: false, statusCode: 401 });
      expect(res.body.data).toBeUndefined();
    });
  });
});

describe('protected routes', () => {
  let good: { token: string; userId: string };
  beforeAll(async () => {
    const res = await auth(await app.idp.sign(person('holder')));
    good = { token: res.body.data.token, userId: res.body.data.user.id };
  });

  const key = () => new TextEncoder().encode(secret);
  const serviceToken = (
    o: { alg?: string; secret?: Uint8Array; iss?: string; aud?: string; exp?: number; nbf?: number; sub?: string } = {},
  ) => {
    const now = Math.floor(Date.now() / 1000);
    const jwt = new SignJWT({ role: 'admin' })
      .setProtectedHeader({ alg: o.alg ?? 'HS256' })
      .setSubject(o.sub ?? good.userId)
      .setIssuer(o.iss ?? 'chat-orders-pdf-service')
      .setAudience(o.aud ?? 'chat-orders-pdf-service-api')
      .setIssuedAt(now - 10)
      .setExpirationTime(o.exp ?? now + 3600);
    if (o.nbf !== undefined) jwt.setNotBefore(o.nbf);
    return jwt.sign(o.secret ?? key());
  };

  test('a valid service token is accepted (envelope and bare routes)', async () => {
    expect((await app.request('GET', '/chat', { token: good.token })).status).toBe(200);
    expect((await app.request('GET', '/orders', { token: good.token })).status).toBe(200);
  });

  const attacks: [string, () => Promise<string | undefined>][] = [
    ['no token', async () => undefined],
    ['a malformed token', async () => 'abc.def'],
    ['a truncated token', async () => good.token.slice(0, -5)],
    [
      'a tampered payload (role and subject changed, signature kept)',
      async () => {
        const [h, , s] = good.token.split('.');
        return `${h}.${b64({ sub: 'someone-else', role: 'admin', iss: 'chat-orders-pdf-service', aud: 'chat-orders-pdf-service-api', exp: 9e9, iat: 1 })}.${s}`;
      },
    ],
    [
      'alg: none',
      async () =>
        `${b64({ alg: 'none' })}.${b64({ sub: good.userId, iss: 'chat-orders-pdf-service', aud: 'chat-orders-pdf-service-api', exp: 9e9, iat: 1 })}.`,
    ],
    ['another algorithm with the right secret (HS512)', async () => serviceToken({ alg: 'HS512' })],
    ['the wrong key', async () => serviceToken({ secret: new TextEncoder().encode('x'.repeat(48)) })],
    ['an expired token', async () => serviceToken({ exp: Math.floor(Date.now() / 1000) - 60 })],
    ['a token not yet valid', async () => serviceToken({ nbf: Math.floor(Date.now() / 1000) + 3600 })],
    ['the wrong issuer', async () => serviceToken({ iss: 'someone-else' })],
    ['the wrong audience', async () => serviceToken({ aud: 'another-api' })],
    ['an identity-provider ID token', async () => app.idp.sign(person('holder'))],
  ];

  test.each(attacks)('%s → 401 in the envelope and in { message } on order routes', async (_name, make) => {
    const token = await make();
    const chat = await app.request('GET', '/chat', token === undefined ? {} : { token });
    expect(chat.status).toBe(401);
    expect(chat.body).toMatchObject({ success: false, statusCode: 401, message: expect.any(String) });
    const orders = await app.request('GET', '/orders', token === undefined ? {} : { token });
    expect(orders.status).toBe(401);
    expect(Object.keys(orders.body)).toEqual(['message']);
  });

  test('an ID token sent where the service token belongs is told to exchange it at POST /auth', async () => {
    const res = await app.request('GET', '/chat', { token: await app.idp.sign(person('holder')) });
    expect(res.status).toBe(401);
    expect(res.body.message).toMatch(/ID token\. Exchange it at POST \/auth/);
    const forged = await app.request('GET', '/chat', { token: await serviceToken({ iss: 'someone-else' }) });
    expect(forged.body.message).toBe('Invalid or expired token');
  });

  test('a token whose user was deleted is 401', async () => {
    const res = await auth(await app.idp.sign(person('gone')));
    const { token, user } = res.body.data;
    expect((await app.request('GET', '/chat', { token })).status).toBe(200);
    const db = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: app.endpoints.dynamodb, region: 'us-east-1' }),
    );
    await db.send(new DeleteCommand({ TableName: app.tableName, Key: { PK: `USER#${user.id}`, SK: 'PROFILE' } }));
    db.destroy();
    const after = await app.request('GET', '/chat', { token });
    expect(after.status).toBe(401);
    expect(after.body.message).toBe('The user of this token no longer exists');
    // Signing in again makes a fresh user: the old token stays dead.
    const back = await auth(await app.idp.sign(person('gone')));
    expect(back.status).toBe(201);
    expect(back.body.data.user.id).not.toBe(user.id);
    expect((await app.request('GET', '/chat', { token })).status).toBe(401);
  });

  const table = () =>
    DynamoDBDocumentClient.from(new DynamoDBClient({ endpoint: app.endpoints.dynamodb, region: 'us-east-1' }));

  test('a deleted user is refused on reads even when the read itself fails (401, not the 404)', async () => {
    const res = await auth(await app.idp.sign(person('gone-read')));
    const { token, user } = res.body.data;
    const db = table();
    await db.send(new DeleteCommand({ TableName: app.tableName, Key: { PK: `USER#${user.id}`, SK: 'PROFILE' } }));
    db.destroy();
    const missingChat = await app.request('GET', `/chat/${'z'.repeat(24)}/messages`, { token });
    expect(missingChat.status).toBe(401);
    const order = await app.request('GET', `/orders/${'z'.repeat(24)}`, { token });
    expect(order.status).toBe(401);
    expect(order.body).toEqual({ message: 'The user of this token no longer exists' });
  });

  test('a token issued before a role change must be renewed, on reads and on writes', async () => {
    const res = await auth(await app.idp.sign(person('demoted')));
    const { token, user } = res.body.data;
    expect((await app.request('GET', '/orders', { token })).status).toBe(200);
    // What a sign-in does when ADMIN_EMAILS changed: the stored role moves, old tokens carry the old one.
    const db = table();
    await db.send(
      new UpdateCommand({
        TableName: app.tableName,
        Key: { PK: `USER#${user.id}`, SK: 'PROFILE' },
        UpdateExpression: 'SET #role = :admin',
        ExpressionAttributeNames: { '#role': 'role' },
        ExpressionAttributeValues: { ':admin': 'admin' },
      }),
    );
    db.destroy();
    const read = await app.request('GET', '/orders', { token });
    expect(read.status).toBe(401);
    expect(read.body).toEqual({ message: 'Your role has changed: sign in again' });
    const write = await app.request('POST', '/chat', { token, body: { type: 'text' } });
    expect(write.status).toBe(401);
    expect(write.body.message).toBe('Your role has changed: sign in again');
  });
});
