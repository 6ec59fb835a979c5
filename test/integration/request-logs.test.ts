import { z } from 'zod';
import { startGateway, type Gateway } from '#infra/local/gateway.ts';
import { installLambdaGlobals } from '#infra/local/lambda-runtime.ts';
import { httpHandler, type HttpLayer } from '#shared/http/handler.ts';
import { ConflictError } from '#shared/errors.ts';
import { logger } from '#shared/observability/logger.ts';
import { until } from '#test/helpers/until.ts';
import { heldStream, testRoute } from '#test/helpers/http-layer.ts';

// What the HTTP layer logs, read from the JSON lines the Powertools logger writes: the Lambda
// context in every line, the reason of a rejection (not under the logger's own `message` key),
// and a streamed response's one line written when its body ends.

installLambdaGlobals();

/** The HTTP layer of these handlers: no caller checks (their routes are `idp`). */
const layer: HttpLayer = { maxBodyBytes: 256 * 1024, corsAllowOrigin: '*' };

const conflictRoute = testRoute({ method: 'POST', path: '/conflict' });
const invalidRoute = testRoute({ method: 'POST', path: '/invalid' });

const tail = heldStream(layer, 'data: first\n\n', 'data: last\n\n');
const handlers: Record<string, unknown> = {
  conflict: httpHandler(
    conflictRoute,
    {},
    async () => {
      throw new ConflictError('Cannot move order from New to Done', 'INVALID_TRANSITION');
    },
    layer,
  ),
  invalid: httpHandler(
    invalidRoute,
    { body: z.strictObject({ name: z.string().min(1) }) },
    async () => ({ data: {} }),
    layer,
  ),
  stream: tail.handler,
};

let gateway: Gateway;
let lines: Record<string, any>[] = [];
let restoreWrite: () => void;
beforeAll(async () => {
  gateway = await startGateway({
    port: 0,
    log: false,
    routes: Object.entries({ conflict: conflictRoute, invalid: invalidRoute, stream: tail.route }).map(([name, r]) => ({
      name,
      entry: name,
      ...r,
    })),
    loadHandler: async (entry) => handlers[entry],
  });
  logger.setLogLevel('INFO');
  // The logger writes one JSON object per line to stdout: kept here instead of printed.
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => {
    for (const line of String(chunk).split('\n')) {
      if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, any>);
    }
    return true;
  }) as typeof process.stdout.write;
  restoreWrite = () => (process.stdout.write = write);
});
afterAll(async () => {
  restoreWrite();
  logger.setLogLevel('SILENT');
  await gateway?.close();
});
beforeEach(() => {
  lines = [];
});

const post = (path: string, body = '{}') =>
  fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': `req-${path.slice(1)}` },
    body,
  });

test('a rejection logs its reason, code and field errors, with the Lambda context and the request id', async () => {
  const res = await post('/conflict');
  expect(res.status).toBe(409);
  const line = lines.find((l) => l.message === 'request rejected');
  expect(line).toMatchObject({
    level: 'INFO',
    statusCode: 409,
    reason: 'Cannot move order from New to Done',
    code: 'INVALID_TRANSITION',
    requestId: 'req-conflict',
    path: '/v1/conflict',
    method: 'POST',
    function_name: 'conflict',
    function_request_id: expect.any(String),
    cold_start: expect.any(Boolean),
  });

  await post('/invalid', JSON.stringify({ name: '' }));
  expect(lines.find((l) => l.message === 'request rejected' && l.requestId === 'req-invalid')).toMatchObject({
    statusCode: 400,
    reason: expect.any(String),
    errors: [expect.objectContaining({ path: 'body.name' })],
    function_name: 'invalid',
  });
});

test("a streamed response's one log line is written when its body ends, not when the handler returns", async () => {
  const res = await post('/stream');
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const first = await reader.read();
  expect(new TextDecoder().decode(first.value)).toContain('data: first');
  // The handler has returned and the first event is out; the response is not over yet.
  expect(lines.filter((l) => l.message === 'request completed')).toEqual([]);
  tail.release();
  let rest = '';
  for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
  expect(rest).toContain('data: last');
  // The line follows the body's end: wait for it (bounded) rather than for a fixed time.
  const completed = () => lines.filter((l) => l.message === 'request completed');
  await until('the request completed line', () => completed().length > 0);
  expect(completed()).toHaveLength(1);
  expect(completed()[0]).toMatchObject({
    statusCode: 200,
    streamed: true,
    requestId: 'req-stream',
    function_name: 'stream',
    ms: expect.any(Number),
  });
});
