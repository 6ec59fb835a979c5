import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '#infra/build.ts';
import { startServerProcess, type ServerProcess } from '#test/helpers/server-process.ts';

// The README's "Try it" blocks, run as a newcomer pastes them: read from README.md (so they
// cannot drift from what is tested), in bash, against `npm start`. Only the lines the README marks
// "your settings" are given this server's values (its free port, its DATA_DIR, a fixture PDF).

const run = promisify(execFile);
const PDF = join(projectRoot, 'test/fixtures/pdfs/tracemonkey.pdf');
const DOC = join(projectRoot, 'test/fixtures/documents/officer-example.docx');

/** The ```bash blocks of the README's "Try it" section, in order. */
function tryItBlocks(readme: string): string[] {
  const section = /^### Try it\n([\s\S]*?)(?=^##)/m.exec(readme)?.[1];
  if (!section) throw new Error('README.md has no "### Try it" section');
  return [...section.matchAll(/^```bash\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

let dataDir: string;
let server: ServerProcess;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'readme-'));
  // The payments block makes a product: the README starts the server with its account as admin.
  server = await startServerProcess({ DATA_DIR: dataDir, ADMIN_EMAILS: 'you@example.com' }, { viaNpm: true });
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

test('the "Try it" blocks run verbatim: sign-in, a chat, a streamed reply, a PDF and a Word file ingested and asked about, branches, an order paid', async () => {
  const blocks = tryItBlocks(await readFile(join(projectRoot, 'README.md'), 'utf8'));
  expect(blocks).toHaveLength(5);
  const settings = blocks.join('\n').match(/^.*# your settings.*$/gm);
  expect(settings).toEqual([
    expect.stringMatching(/^export PORT=3000 DATA_DIR=\.data\s/),
    expect.stringMatching(/^PDF=paper\.pdf\s/),
    expect.stringMatching(/^DOC=report\.docx\s/),
  ]);
  const port = new URL(server.url).port;
  const script = blocks
    .join('\n')
    .replace(/^export PORT=.*$/m, `export PORT=${port} DATA_DIR=${dataDir}`)
    .replace(/^PDF=.*$/m, `PDF=${PDF}`)
    .replace(/^DOC=.*$/m, `DOC=${DOC}`);

  // As pasted into a shell that stops at the first failing command (curl --fail-with-body, field).
  const { stdout, stderr } = await run('bash', ['-e', '-o', 'pipefail', '-c', script], {
    cwd: projectRoot,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((err: { stdout: string; stderr: string; code: number }) => {
    throw new Error(`the README's blocks failed (exit ${err.code}):\n${err.stderr}\n--- stdout ---\n${err.stdout}`);
  });
  expect(stderr).toBe('');
  // The first block: a whole reply, a streamed one ending in [DONE], the chat's messages.
  expect(stdout).toContain('"message":"Reply generated"');
  expect(stdout).toContain('data: [DONE]');
  expect(stdout).toContain('"messageType":"ai"');
  // The second: the upload, the ingestion waited for until completed, an answer citing the PDF.
  const statuses = stdout.match(/^(processing|completed|failed)$/gm);
  expect(statuses?.at(-1)).toBe('completed');
  expect(stdout).toMatch(/"sources":\[\{"fileId":"\w+","fileName":"tracemonkey.pdf","page":\d+/);
  // A Word file: read as docx, a source placed in its sections, a part's text.
  expect(stdout).toMatch(/"format":"docx"/);
  expect(stdout).toMatch(/"location":\{"type":"section","path":\[/);
  expect(stdout).toMatch(/"data":\{"part":1,"location":\{"type":"section"/);
  // The third: a regenerated reply, a new root, a branch read by its leaf with its siblings, and made active.
  expect(stdout).toMatch(/"siblingIds":\["\w+","\w+"\]/);
  expect(stdout).toContain('"message":"Chat updated"');
  // The fourth: an order with its payment intent, a declined card, a paying one, the webhook's move, the refund.
  expect(stdout).toMatch(/^requires_payment$/m);
  expect(stdout).toMatch(/^Declined: payment pi_\w+ of order \w+ failed/m);
  expect(stdout).toMatch(/^Paid: payment pi_\w+ of order \w+ succeeded/m);
  expect(stdout.match(/^(New|Processing)$/gm)?.at(-1)).toBe('Processing');
  expect(stdout).toMatch(/"payment":\{[^}]*"status":"paid"[^}]*\}/);
  expect(stdout).toMatch(/"payment":\{[^}]*"amountCents":4998[^}]*\}/);
  expect(stdout).toMatch(/"status":"Cancelled"/);
}, 240_000);
