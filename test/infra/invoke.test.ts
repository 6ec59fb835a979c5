import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '#infra/build.ts';

// `npm run invoke`: one function, once, in its own process, on a data directory like npm start's.

const TSX_CLI = join(projectRoot, 'node_modules/tsx/dist/cli.mjs');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function invoke(dataDir: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [TSX_CLI, 'infra/local/invoke.ts', ...args],
      {
        cwd: projectRoot,
        timeout: 60_000,
        // Only what a developer's shell would have: no settings leak in from the test run.
        env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir },
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'invoke-'));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

test('sign-in with the sample event creates the user, and a second run finds it in the same DATA_DIR', async () => {
  const first = await invoke(dataDir, 'sign-in', 'events/sign-in.json', '--email', 'invoke@example.com');
  expect([first.code, first.stderr]).toEqual([0, expect.stringContaining('(sign-in: ')]);
  expect(first.stdout).toMatch(/^HTTP 201\n/);
  const body = JSON.parse(first.stdout.slice(first.stdout.indexOf('\n{') + 1));
  expect(body).toMatchObject({ success: true, statusCode: 201, data: { user: { email: 'invoke@example.com' } } });

  const second = await invoke(dataDir, 'sign-in', 'events/sign-in.json', '--email', 'invoke@example.com');
  expect(second.stdout).toMatch(/^HTTP 200\n/);
  expect(JSON.parse(second.stdout.slice(second.stdout.indexOf('\n{') + 1)).data.user.id).toBe(body.data.user.id);
}, 90_000);

test('a DATA_DIR held by another process (npm start) stops the invoke with a message saying so', async () => {
  // This test's own process stands in for a running `npm start` holding the directory.
  await writeFile(join(dataDir, 'runtime.pid'), String(process.pid));
  try {
    const run = await invoke(dataDir, 'sign-in', 'events/sign-in.json');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `${dataDir} is in use by another process (pid ${process.pid}: is \`npm start\` running on it?)`,
    );
    expect(run.stdout).toBe('');
  } finally {
    await rm(join(dataDir, 'runtime.pid'), { force: true });
  }
}, 60_000);

test('an unknown function or a missing event file is a usage error naming the problem', async () => {
  const unknown = await invoke(dataDir, 'no-such-function', 'events/sign-in.json');
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toContain('No function "no-such-function" in infra/routes.ts');
  const missing = await invoke(dataDir, 'sign-in', 'events/missing.json');
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain('Cannot read the event file');
}, 60_000);
