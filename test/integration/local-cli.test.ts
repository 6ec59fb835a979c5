import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '#infra/local/runtime.ts';
import { npmCommand, startServerProcess, type ServerProcess } from '#test/helpers/server-process.ts';
import { rawRequest } from '#test/helpers/raw-request.ts';

// The local sign-in as the banner of `npm start` tells it: `npm run token` signs with the key in
// DATA_DIR, so the banner names a DATA_DIR other than the default, and the token command refuses
// a DATA_DIR without a key (a key it made there would be one the server does not know).

const run = promisify(execFile);
let dataDir: string;
let otherDir: string;
let server: ServerProcess;

beforeAll(async () => {
  [dataDir, otherDir] = await Promise.all([
    mkdtemp(join(tmpdir(), 'local-cli-')),
    mkdtemp(join(tmpdir(), 'local-cli-other-')),
  ]);
  server = await startServerProcess({ DATA_DIR: dataDir, LOCAL_ALLOWED_HOSTS: 'DevBox.test, 192.168.1.20' });
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await Promise.all([dataDir, otherDir].map((d) => d && rm(d, { recursive: true, force: true })));
});

/** `npm run -s token -- --email E` with a DATA_DIR. */
function token(dir: string, email: string) {
  const [command, args] = npmCommand(['run', '-s', 'token', '--', '--email', email]);
  return run(command, args, {
    cwd: projectRoot,
    env: { ...process.env, DATA_DIR: dir },
  });
}

test('the banner signs in with the DATA_DIR the server runs with', () => {
  expect(server.output()).toContain(`TOKEN=$(DATA_DIR=${dataDir} npm run -s token -- --email you@example.com)`);
});

test('npm run token with the server’s DATA_DIR gives an ID token POST /auth accepts', async () => {
  const { stdout } = await token(dataDir, 'cli@example.com');
  const res = await fetch(`${server.url}/auth`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stdout.trim()}` },
  });
  expect(res.status).toBe(201);
}, 60_000);

test('npm run token with a DATA_DIR no server has used refuses, says why, and creates no key', async () => {
  const refused = await token(otherDir, 'cli@example.com').then(
    () => undefined,
    (err: { code: number; stderr: string; stdout: string }) => err,
  );
  expect(refused).toMatchObject({ code: 2, stdout: '' });
  expect(refused!.stderr).toContain(`No local identity provider in ${otherDir}`);
  expect(existsSync(join(otherDir, 'local-idp-key.json'))).toBe(false);
}, 60_000);

test('LOCAL_ALLOWED_HOSTS: npm start answers those names too, and still no other', async () => {
  const port = new URL(server.url).port;
  const statusFor = async (host: string) =>
    (await rawRequest({ method: 'GET', base: server.url, path: '/openapi.json', headers: { host } })).status;
  expect(await statusFor(`devbox.test:${port}`)).toBe(200);
  expect(await statusFor(`192.168.1.20:${port}`)).toBe(200);
  expect(await statusFor(`localhost:${port}`)).toBe(200);
  expect(await statusFor(`evil.example:${port}`)).toBe(421);
});

test('LOCAL_ALLOWED_HOSTS with a port or a URL is refused at start, naming the variable', async () => {
  const [command, args] = npmCommand(['start', '-s']);
  const failed = await run(command, args, {
    cwd: projectRoot,
    env: { ...process.env, PORT: '0', DATA_DIR: otherDir, LOCAL_ALLOWED_HOSTS: 'devbox.test:3000' },
  }).then(
    () => undefined,
    (err: { code: number; stderr: string }) => err,
  );
  expect(failed?.code).toBe(1);
  expect(failed?.stderr).toMatch(/LOCAL_ALLOWED_HOSTS: must be host names without a port/);
});

/** `npm run -s pay -- <args>` with a DATA_DIR. */
function pay(dir: string, ...args: string[]) {
  const [command, npmArgs] = npmCommand(['run', '-s', 'pay', '--', ...args]);
  return run(command, npmArgs, { cwd: projectRoot, env: { ...process.env, DATA_DIR: dir } }).then(
    ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
    (err: { code: number; stderr: string; stdout: string }) => err,
  );
}

test('npm run pay refuses, saying why: no order id, a DATA_DIR no server has used, an order with no payment', async () => {
  expect(await pay(dataDir)).toMatchObject({
    code: 2,
    stderr: expect.stringContaining('usage: npm run pay -- <orderId> [--fail]'),
  });
  expect(await pay(otherDir, 'o9r4d2e7r1s5t8u3v6w0x4yz')).toMatchObject({
    code: 2,
    stderr: expect.stringContaining(`No payment provider stand-in in ${otherDir}`),
  });
  expect(await pay(dataDir, 'o9r4d2e7r1s5t8u3v6w0x4yz')).toMatchObject({
    code: 2,
    stderr: expect.stringContaining('No payment intent for order o9r4d2e7r1s5t8u3v6w0x4yz'),
  });
}, 60_000);
