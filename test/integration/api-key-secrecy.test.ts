import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { until } from '#test/helpers/until.ts';

// An API key never appears in a log line or a list: every line the functions write (at DEBUG,
// the most they log) and everything this process writes is kept while a key is created, used (a
// good request, an OpenAI-compatible one, a malformed key, a made-up secret, a revoked key) and
// listed; neither the key nor its secret part occurs in any of it, nor in the list's response.

let app: TestApp;
let token: string;
let output = '';
const restore: (() => void)[] = [];

/** Keeps what this process writes to a stream (the gateway and the pollers run here), besides writing it. */
function keep(stream: NodeJS.WriteStream) {
  const write = stream.write.bind(stream);
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    output += String(chunk);
    return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof stream.write;
  restore.push(() => (stream.write = write));
}

beforeAll(async () => {
  keep(process.stdout);
  keep(process.stderr);
  app = await startTestApp({
    env: { LOG_LEVEL: 'DEBUG' },
    functionOutput: (chunk) => {
      output += chunk;
    },
  });
  ({ token } = await app.signIn('secrecy@example.com'));
});
afterAll(async () => {
  await app?.stop();
  for (const r of restore) r();
});

test('neither a key nor its secret occurs in any log line or in the list of keys', async () => {
  const created = await app.request('POST', '/me/api-keys', { token, body: { name: 'ci' } });
  expect(created.status).toBe(201);
  const key: string = created.body.data.key;
  // `cops_<24-character id>_<43-character secret>`; the secret's base64url may itself hold `_`.
  const secret = key.slice('cops_'.length + 24 + 1);
  expect(secret).toHaveLength(43);

  // A good request, and one through the OpenAI-compatible route.
  expect((await app.request('GET', '/me', { token: key })).status).toBe(200);
  expect((await app.request('GET', '/openai/models', { token: key })).status).toBe(200);
  // The same secret with its key's shape broken, and a made-up secret on the real key id.
  const malformed = await app.request('GET', '/me', { token: `${key}x` });
  expect(malformed.status).toBe(401);
  const madeUp = `${key.slice(0, -secret.length)}${'A'.repeat(43)}`;
  expect((await app.request('GET', '/me', { token: madeUp })).status).toBe(401);
  // Listed, then revoked and used again.
  const list = await app.request('GET', '/me/api-keys', { token });
  expect(list.status).toBe(200);
  expect(list.body.data.map((k: { id: string }) => k.id)).toEqual([created.body.data.id]);
  expect((await app.request('DELETE', `/me/api-keys/${created.body.data.id}`, { token })).status).toBe(200);
  expect((await app.request('GET', '/me', { token: key })).status).toBe(401);

  // Each of the 9 requests (the sign-in's too) writes its one line; all are in before anything is read.
  await until(
    "the requests' log lines",
    () => output.match(/"request (completed|rejected)"/g)?.length ?? 0,
    (n) => n >= 9,
  );
  const lines = output.split('\n').filter((l) => l.trim() !== '');
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) {
    expect(line).not.toContain(secret);
    expect(line).not.toContain(key);
  }
  // The lines are there to be read: the refusals were logged, just not with their keys.
  expect(lines.filter((l) => l.includes('"request rejected"') && l.includes('"statusCode":401'))).toHaveLength(3);
  expect(list.text).not.toContain(secret);
  expect(list.text).not.toContain(key);
});
