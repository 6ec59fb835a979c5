import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signLocalIdToken } from '#infra/local/local-idp.ts';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts';

// `npm start` as a developer runs it: data under DATA_DIR survives a restart, two copies with
// their own PORT and DATA_DIR run side by side, and Ctrl-C stops it cleanly.

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function signIn(server: ServerProcess, dataDir: string, email: string) {
  const idToken = await signLocalIdToken(dataDir, { email });
  const res = await fetch(`${server.url}/auth`, { method: 'POST', headers: { authorization: `Bearer ${idToken}` } });
  return { status: res.status, body: (await res.json()) as { data: { user: { id: string }; token: string } } };
}

test('users and their tokens survive a restart, and Ctrl-C exits cleanly', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'restart-'));
  dirs.push(dataDir);

  const first = await startServerProcess({ DATA_DIR: dataDir });
  const created = await signIn(first, dataDir, 'keep@example.com');
  expect(first.output()).toMatch(/AI provider: offline/);
  expect(await first.stop()).toBe(0);

  const second = await startServerProcess({ DATA_DIR: dataDir });
  try {
    const again = await signIn(second, dataDir, 'keep@example.com');
    expect(created.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body.data.user.id).toBe(created.body.data.user.id);
  } finally {
    expect(await second.stop()).toBe(0);
  }
  // One log line per request: method, path, status, milliseconds.
  expect(second.output()).toMatch(/POST \/api\/v1\/auth 200 \d+\.\dms/);
});

test('two copies run side by side with their own ports and data', async () => {
  const [dirA, dirB] = await Promise.all([mkdtemp(join(tmpdir(), 'copy-a-')), mkdtemp(join(tmpdir(), 'copy-b-'))]);
  dirs.push(dirA, dirB);
  const [a, b] = await Promise.all([startServerProcess({ DATA_DIR: dirA }), startServerProcess({ DATA_DIR: dirB })]);
  try {
    expect(a.url).not.toBe(b.url);
    const inA = await signIn(a, dirA, 'same@example.com');
    const inB = await signIn(b, dirB, 'same@example.com');
    expect(inA.status).toBe(201);
    expect(inB.status).toBe(201);
    expect(inA.body.data.user.id).not.toBe(inB.body.data.user.id);
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
});

test('a bad setting stops start-up with a message naming the variable', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'bad-config-'));
  dirs.push(dataDir);
  await expect(startServerProcess({ DATA_DIR: dataDir, PDF_MAX_BYTES: 'huge' })).rejects.toThrow(/PDF_MAX_BYTES/);
});

test('a second copy on the same DATA_DIR stops with a message saying why', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'shared-dir-'));
  dirs.push(dataDir);
  const first = await startServerProcess({ DATA_DIR: dataDir });
  try {
    await expect(startServerProcess({ DATA_DIR: dataDir })).rejects.toThrow(
      /is in use by another process \(pid \d+: is `npm start` running on it\?\)/,
    );
    // The first copy is unaffected.
    expect((await signIn(first, dataDir, 'still@example.com')).status).toBe(201);
  } finally {
    expect(await first.stop()).toBe(0);
  }
});
