import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { until } from '#test/helpers/until.ts';

// Under `npm start` the data sweep runs on an interval (SWEEP_INTERVAL_SECONDS) through the
// data-sweep function as deployed: an export asked for turns ready with nothing else called.

let app: TestApp;
let dir: string;

beforeAll(async () => {
  app = await startTestApp({ env: { SWEEP_INTERVAL_SECONDS: '1' } });
  dir = mkdtempSync(join(tmpdir(), 'account-export-sweep-'));
});
afterAll(async () => {
  await app?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the periodic data sweep builds the export: GET turns ready, and the ZIP holds the chat', async () => {
  const { token } = await app.signIn('dave-export@example.com');
  const chatId = (await app.request('POST', '/chat', { token, body: { name: 'Hello', type: 'text' } })).body.data.id;
  const created = await app.request('POST', '/me/export', { token });
  expect(created.status).toBe(202);
  const ready = await until(
    'the sweep to build the export',
    async () => (await app.request('GET', `/me/export/${created.body.data.exportId}`, { token })).body.data,
    (d) => d.status === 'ready',
  );
  const file = join(dir, 'export.zip');
  writeFileSync(file, Buffer.from(await (await fetch(ready.url)).arrayBuffer()));
  // Info-ZIP lists it (`-Z1`: one name a line).
  expect(execFileSync('unzip', ['-Z1', file], { encoding: 'utf8' }).trim().split('\n').sort()).toEqual([
    `chats/${chatId}.json`,
    `chats/${chatId}.md`,
    'collections.json',
    'files.json',
    'orders.json',
  ]);
});
