import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { OPENAPI_PATH } from '#infra/openapi.ts';
import { projectRoot } from '#infra/local/runtime.ts';

// What a client developer does with docs/openapi.json: lint it with @redocly/cli, and generate
// typed client code with openapi-typescript that must type-check against named schemas.

const run = promisify(execFile);
const bin = (path: string) => join(projectRoot, 'node_modules', path);
// Neither tool may reach the network from a test (Redocly sends usage data unless told not to).
const env = {
  ...process.env,
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  NO_UPDATE_NOTIFIER: '1',
};

test('@redocly/cli lint (recommended rules, redocly.yaml) finds no error and no warning', async () => {
  const out = await run(process.execPath, [bin('@redocly/cli/bin/cli.js'), 'lint', '--format=json', OPENAPI_PATH], {
    cwd: projectRoot,
    env,
  }).catch((err: { stdout: string; stderr: string }) => err);
  const report = JSON.parse(out.stdout.slice(out.stdout.indexOf('{'))) as {
    totals: { errors: number; warnings: number };
    problems: { message: string }[];
  };
  expect(report.problems.map((p) => p.message)).toEqual([]);
  expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
}, 120_000);

describe('a client generated with openapi-typescript', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'openapi-client-'));
    await run(process.execPath, [bin('openapi-typescript/bin/cli.js'), OPENAPI_PATH, '-o', join(dir, 'api.d.ts')], {
      cwd: projectRoot,
      env,
    });
  }, 120_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const tsc = async (source: string) => {
    await writeFile(join(dir, 'client.ts'), source);
    const args = [
      bin('typescript/bin/tsc'),
      '--noEmit',
      '--strict',
      '--target',
      'es2022',
      '--module',
      'nodenext',
      '--skipLibCheck',
      join(dir, 'client.ts'),
    ];
    return run(process.execPath, args, { cwd: dir, env }).then(
      () => '',
      (err: { stdout: string }) => err.stdout,
    );
  };

  test('type-checks a small client using the named schemas and the routes', async () => {
    const errors = await tsc(`
import type { components, paths } from './api.js';
type Schemas = components['schemas'];
type Chat = Schemas['Chat'];
type ChatList = paths['/chat']['get']['responses'][200]['content']['application/json'];
type ChatWithFiles = paths['/chat/{chatId}']['get']['responses'][200]['content']['application/json']['data'];
type Uploads = paths['/upload']['get']['responses'][200]['content']['application/json']['data'];
type Reply = paths['/message/logged-in']['post']['responses'][200]['content']['application/json']['data'];
type Start = Schemas['StreamStartEvent'];
type Order = paths['/orders/{id}']['get']['responses'][200]['content']['application/json'];
type Product = Schemas['Product'];
type NotFound = paths['/chat/{chatId}']['get']['responses'][404]['content']['application/json'];

const chat: Chat = { id: 'c1', userId: 'u1', chatName: 'New Chat', systemMessage: 's', createdAt: 'now', updatedAt: 'now', status: 'active', type: 'file' };
const list: ChatList = { success: true, statusCode: 200, message: 'ok', data: [chat] };
const detail: ChatWithFiles = { ...chat, files: [{ fileId: 'f', fileName: 'a.pdf', status: 'processing', size: 1, createdAt: 'now', updatedAt: 'now',
  progress: { stage: 'extract', pages: { done: 1, total: 3 }, parts: { done: 0 } } }] };
const uploads: Uploads = detail.files;
const reply: Reply = { response: 'hi', messageId: 'm2', userMessageId: 'm1', sequenceNumber: 2, status: 'complete', usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
  sources: [{ fileId: 'f', page: 1, chunk: 0, score: 0.5, quote: 'q' }] };
const start: Start = { chatId: 'c1', userMessageId: 'm1', userSequenceNumber: 1, messageId: 'm2' };
const order: Order = { id: 'o', userId: 'u', status: 'New', createdAt: 'now', updatedAt: 'now', providerPaymentIntentId: null, payment: null, items: [], totalCents: 0, currency: null };
const product: Product = { id: 'p', name: 'n', description: '', priceCents: 1, currency: 'EUR', createdAt: 'now', updatedAt: 'now' };
const notFound: NotFound = { success: false, statusCode: 404, message: 'Chat not found' };
// The types are precise, not any: each line below must be an error.
// @ts-expect-error a chat type outside text | file
const wrongType: Chat['type'] = 'video';
// @ts-expect-error an order status outside the machine's
const wrongStatus: Order['status'] = 'Lost';
// @ts-expect-error a reply always carries its message id
const noId: Reply = { response: 'hi', userMessageId: 'm1', sequenceNumber: 2, status: 'complete', usage: reply.usage };
export { list, uploads, start, order, product, notFound, wrongType, wrongStatus, noId };
`);
    expect(errors).toBe('');
  }, 120_000);

  test('the check is real: a wrong field fails to type-check', async () => {
    const errors = await tsc(`
import type { components } from './api.js';
export const chat: components['schemas']['Chat'] = { id: 'c1', chatName: 1 } as unknown as never;
export const user: components['schemas']['User'] = { id: 'u', emial: 'x' };
`);
    expect(errors).toMatch(/emial/);
  }, 120_000);
});
