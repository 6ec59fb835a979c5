import { z } from 'zod';
import { startGateway, type Gateway } from '#infra/local/gateway.ts';
import { installLambdaGlobals } from '#infra/local/lambda-runtime.ts';
import { httpHandler, type HttpLayer } from '#shared/http/handler.ts';
import { logger } from '#shared/observability/logger.ts';
import { ConflictError } from '#shared/errors.ts';
import { cuidSchema } from '#shared/schemas.ts';
import { heldStream, testRoute } from '#test/helpers/http-layer.ts';

// The HTTP layer every route shares, exercised through the local gateway over real HTTP with
// handlers made for the test: parsing, validation, error mapping, body shapes, headers, routing
// and response streaming.

installLambdaGlobals();
logger.setLogLevel('SILENT');

/** The HTTP layer of these handlers: a small body limit, and no caller checks (their routes are `idp`). */
const layer: HttpLayer = { maxBodyBytes: 2048, corsAllowOrigin: '*' };

const echoRoute = testRoute({ method: 'POST', path: '/echo/{id}' });
const bareRoute = testRoute({ method: 'PUT', path: '/bare/{id}', shape: 'bare' });
const failRoute = testRoute({ method: 'GET', path: '/fail' });

// A route that declares its success: the handler returns the payload alone.
const madeRoute = {
  ...testRoute({ method: 'POST', path: '/made' }),
  success: { status: 201, message: 'Thing made' },
} as const;
const chunks = heldStream(layer, 'data: first\n\n', 'data: second\n\n');

const handlers: Record<string, unknown> = {
  echo: httpHandler(
    echoRoute,
    {
      params: z.strictObject({ id: cuidSchema }),
      query: z.strictObject({ n: z.coerce.number().int().min(1).optional() }),
      body: z.strictObject({ name: z.string().min(1), tags: z.array(z.string()).max(3).optional() }),
    },
    async ({ body, params, query }) => ({ statusCode: 201, data: { ...body, id: params.id, n: query.n ?? null } }),
    layer,
  ),
  bare: httpHandler(
    bareRoute,
    { body: z.strictObject({ status: z.enum(['New', 'Done']) }) },
    async ({ body }) => {
      if (body.status === 'Done') throw new ConflictError('Cannot move order from New to Done');
      return { data: { status: body.status } };
    },
    layer,
  ),
  fail: httpHandler(
    failRoute,
    {},
    async () => {
      throw new Error('secret internal detail: db password=hunter2');
    },
    layer,
  ),
  // The payload has a result's field names: the declared route must send them as data.
  made: httpHandler(madeRoute, {}, async () => ({ statusCode: 418, message: 'a field of the payload' }), layer),
  stream: chunks.handler,
};

const routes = [
  { name: 'echo', entry: 'echo', ...echoRoute },
  { name: 'bare', entry: 'bare', ...bareRoute },
  { name: 'fail', entry: 'fail', ...failRoute },
  { name: 'stream', entry: 'stream', ...chunks.route },
  { name: 'made', entry: 'made', ...madeRoute },
];

let gateway: Gateway;
beforeAll(async () => {
  gateway = await startGateway({ port: 0, log: false, routes, loadHandler: async (entry) => handlers[entry] });
});
afterAll(() => gateway?.close());

const id = 'a'.repeat(24);
const post = (
  path: string,
  body: string | undefined,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<Omit<Response, 'json'> & { json(): Promise<any> }> =>
  fetch(`${gateway.url}${path}`, { method: 'POST', headers, ...(body !== undefined && { body }) });

test('valid input reaches the handler, typed and coerced, in the envelope', async () => {
  const res = await post(`/echo/${id}?n=3`, JSON.stringify({ name: 'x' }));
  expect(res.status).toBe(201);
  expect(await res.json()).toEqual({
    success: true,
    statusCode: 201,
    message: 'Created',
    data: { name: 'x', id, n: 3 },
  });
  expect(res.headers.get('x-request-id')).toMatch(/^[a-z0-9]+$/);
  expect(res.headers.get('access-control-allow-origin')).toBe('*');
});

test("a route's declared success gives the status and message; the handler's return is the data", async () => {
  const res = await post('/made', undefined, {});
  expect(res.status).toBe(201);
  expect(await res.json()).toEqual({
    success: true,
    statusCode: 201,
    message: 'Thing made',
    data: { statusCode: 418, message: 'a field of the payload' },
  });
});

test('a client request id is echoed back', async () => {
  const res = await post(`/echo/${id}`, JSON.stringify({ name: 'x' }), {
    'content-type': 'application/json',
    'x-request-id': 'trace-123',
  });
  expect(res.headers.get('x-request-id')).toBe('trace-123');
});

test('malformed JSON is a 400 in the envelope', async () => {
  const res = await post(`/echo/${id}`, '{"name": ');
  expect(res.status).toBe(400);
  expect(await res.json()).toMatchObject({ success: false, statusCode: 400, message: 'Malformed JSON body' });
});

test('validation failures list every field, by location', async () => {
  const res = await post(`/echo/not-a-cuid?n=0`, JSON.stringify({ tags: [1, 2, 3, 4], extra: true }));
  expect(res.status).toBe(400);
  const body = await res.json();
  expect(body).toMatchObject({ success: false, statusCode: 400, message: 'Request validation failed' });
  const paths = body.errors.map((e: { path: string }) => e.path);
  expect(paths).toEqual(expect.arrayContaining(['params.id', 'query.n', 'body.name', 'body.tags', 'body']));
  expect(body.data).toBeUndefined();
});

test('a missing body validates as empty and names the required fields', async () => {
  const res = await post(`/echo/${id}`, undefined, {});
  expect(res.status).toBe(400);
  expect((await res.json()).errors).toEqual([expect.objectContaining({ path: 'body.name' })]);
});

test('a non-JSON content type is a 415', async () => {
  const res = await post(`/echo/${id}`, 'name=x', { 'content-type': 'application/x-www-form-urlencoded' });
  expect(res.status).toBe(415);
  expect((await res.json()).statusCode).toBe(415);
});

test('a body over MAX_BODY_BYTES is a 413', async () => {
  const res = await post(`/echo/${id}`, JSON.stringify({ name: 'x'.repeat(5000) }));
  expect(res.status).toBe(413);
  expect((await res.json()).message).toMatch(/2048 bytes/);
});

test('deeply nested JSON is refused as a client error, not a crash', async () => {
  const res = await post(`/echo/${id}`, `${'['.repeat(1000)}${']'.repeat(1000)}`);
  expect(res.status).toBe(400);
  expect((await res.json()).errors).toEqual([expect.objectContaining({ path: 'body' })]);
});

test('bare routes answer bare objects and { message } errors', async () => {
  const putBare = (status: string) =>
    fetch(`${gateway.url}/bare/x`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status }),
    });
  const ok = await putBare('New');
  expect(await ok.json()).toEqual({ status: 'New' });
  const conflict = await putBare('Done');
  expect(conflict.status).toBe(409);
  expect(await conflict.json()).toEqual({ message: 'Cannot move order from New to Done' });
  const invalid = await putBare('Lost');
  expect(invalid.status).toBe(400);
  expect(await invalid.json()).toMatchObject({
    message: 'Request validation failed',
    errors: [expect.objectContaining({ path: 'body.status' })],
  });
});

test('an unexpected error is a generic 500 that leaks nothing', async () => {
  const res = await fetch(`${gateway.url}/fail`);
  expect(res.status).toBe(500);
  const text = await res.text();
  expect(JSON.parse(text)).toEqual({ success: false, statusCode: 500, message: 'Internal server error' });
  expect(text).not.toMatch(/hunter2|secret/);
});

test('unknown paths, and known paths with another method, get the stack gateway response (404)', async () => {
  const notFound = { success: false, statusCode: 404, message: 'Not found' };
  const missing = await fetch(`${gateway.url}/nowhere`);
  expect(missing.status).toBe(404);
  expect(await missing.json()).toEqual(notFound);
  const outside = await fetch(gateway.url.replace('/api/v1', '/elsewhere'));
  expect(outside.status).toBe(404);
  const wrong = await fetch(`${gateway.url}/echo/${id}`, { method: 'DELETE' });
  expect(wrong.status).toBe(404);
  expect(await wrong.json()).toEqual(notFound);
  // A gateway response has no per-route shape: bare routes get the envelope too (with its message).
  const bareWrong = await fetch(`${gateway.url}/bare/x`, { method: 'GET' });
  expect(await bareWrong.json()).toEqual(notFound);
});

test('CORS preflight answers what the stack configures', async () => {
  const res = await fetch(`${gateway.url}/echo/${id}`, { method: 'OPTIONS' });
  expect(res.status).toBe(204);
  expect(res.headers.get('access-control-allow-methods')).toBe('GET,POST,PUT,PATCH,DELETE,OPTIONS');
  expect(res.headers.get('access-control-allow-headers')).toMatch(/authorization/);
});

test('a streaming handler reaches the client chunk by chunk, before it finishes', async () => {
  const res = await fetch(`${gateway.url}/stream`, { method: 'POST' });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/event-stream');
  expect(res.headers.get('x-request-id')).toBeTruthy();
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  // The second chunk is only produced after the client has read the first one.
  const first = await reader.read();
  expect(decoder.decode(first.value)).toBe('data: first\n\n');
  chunks.release();
  let rest = '';
  for (let r = await reader.read(); !r.done; r = await reader.read()) rest += decoder.decode(r.value);
  expect(rest).toBe('data: second\n\n');
});
