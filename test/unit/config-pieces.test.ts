import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../infra/local/runtime.ts';

// config() in a process of its own (as in a function's bundle): it parses the pieces of the
// configuration that the process imported, checks a piece imported later as it is imported, and
// refuses to read a setting of a piece nothing imported.

const run = promisify(execFile);
const tsx = join(projectRoot, 'node_modules/.bin/tsx');
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'config-pieces-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs a module body with the project's shared/ at `#`; what it prints, parsed. */
async function inProcess(body: string, env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const file = join(dir, `case-${Math.random().toString(36).slice(2)}.mts`);
  await writeFile(file, body.replaceAll('#/', `${join(projectRoot, 'shared')}/`));
  const { stdout } = await run(tsx, [file], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', TABLE_NAME: 't', ...env },
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

const outcome = `
const outcome = (f: () => unknown) => { try { return f(); } catch (err) { return (err as Error).message; } };
`;

test('only the imported pieces are parsed; a setting of another piece is refused by name', async () => {
  const seen = await inProcess(
    `import '#/config/auth.ts';
     import { config } from '#/config.ts';
     ${outcome}
     console.log(JSON.stringify({
       table: config().TABLE_NAME,
       ttl: config().SERVICE_JWT_TTL_SECONDS,
       pdf: outcome(() => config().PDF_MAX_BYTES),
     }));`,
    // A bad value of a piece this process does not import does not stop it (the stack's synth
    // check and the functions that read it do).
    { PDF_MAX_BYTES: 'lots' },
  );
  expect(seen).toEqual({
    table: 't',
    ttl: 30 * 24 * 3600,
    pdf: expect.stringMatching(/^PDF_MAX_BYTES: read, but no module of this function imports its piece/),
  });
});

test('a bad value of an imported piece stops start-up naming the variable', async () => {
  const seen = await inProcess(
    `import '#/config/auth.ts';
     import { config } from '#/config.ts';
     ${outcome}
     console.log(JSON.stringify({ start: outcome(() => config().TABLE_NAME) }));`,
    { SERVICE_JWT_TTL_SECONDS: 'forever' },
  );
  expect(seen.start).toMatch(/^Invalid configuration:\n {2}SERVICE_JWT_TTL_SECONDS:/);
});

test('a piece imported after the cold start is parsed as it is imported', async () => {
  const seen = await inProcess(
    `import { config } from '#/config.ts';
     const settings = config();
     await import('#/config/chat.ts');
     const bad = await import('#/config/sharing.ts').then(() => 'imported', (err: Error) => err.message);
     console.log(JSON.stringify({ prompt: settings.PROMPT_MAX_CHARS, bad }));`,
    { PROMPT_MAX_CHARS: '500', SHARE_MAX_BYTES: 'huge' },
  );
  expect(seen).toEqual({ prompt: 500, bad: expect.stringMatching(/^Invalid configuration:\n {2}SHARE_MAX_BYTES:/) });
});
