import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGateway, type Gateway } from '#infra/local/gateway.ts';
import { startFunctionInstances, type FunctionInstances } from '#infra/local/function-instances.ts';
import type { HttpRoute } from '#infra/routes.ts';

// The local gateway answers what API Gateway answers for the deployed stack: its own gateway
// responses (infra/gateway-responses.ts) for a wrong method or path, a failed or timed-out
// function; the streaming prelude on the function's first write; a function that throws
// mid-stream ends that response (and nothing else); a stream that never ends is cut at the
// function's timeout. The functions run isolated, as in `npm start`; the streaming one is a
// test-only probe written against the Lambda runtime's API (test/infra/fixtures/probe-stream.ts).

const route = (over: Partial<HttpRoute> & Pick<HttpRoute, 'method' | 'path'> & { name: string; entry: string }) => ({
  auth: 'idp' as const,
  shape: 'bare' as const,
  access: {},
  memoryMb: 256,
  ...over,
});

let functions: FunctionInstances;
let gateway: Gateway;
let releaser: http.Server;
let releaserUrl: string;
const releaseWaiters: (() => void)[] = [];
let released: (() => void) | undefined;

beforeAll(async () => {
  // The streaming probe's second write waits for this server to answer; the test answers once
  // the client has seen the first bytes (no timing involved).
  releaser = http.createServer((_req, res) => {
    released = () => res.end('go');
    for (const w of releaseWaiters.splice(0)) w();
  });
  await new Promise<void>((r) => releaser.listen(0, '127.0.0.1', r));
  releaserUrl = `http://127.0.0.1:${(releaser.address() as AddressInfo).port}/release`;
  functions = startFunctionInstances({ env: { ...(process.env as Record<string, string>) } });
  gateway = await startGateway({
    port: 0,
    log: false,
    invoker: functions,
    routes: [
      route({
        name: 'probe-stream',
        entry: 'test/infra/fixtures/probe-stream.ts',
        method: 'POST',
        path: '/stream',
        streaming: true,
        // Reached on purpose by the stream that never ends; long enough that a stream waiting for
        // the test's release is not cut on a loaded machine.
        timeoutSeconds: 15,
      }),
      route({
        name: 'probe-get',
        entry: 'test/infra/fixtures/probe-function.ts',
        method: 'GET',
        path: '/things/{id}',
        timeoutSeconds: 10,
      }),
    ],
  });
}, 120_000);
afterAll(async () => {
  await gateway?.close();
  await functions?.close();
  releaser?.closeAllConnections();
  await new Promise((r) => releaser?.close(r));
});

const NOT_FOUND = { success: false, statusCode: 404, message: 'Not found' };
const whenReleaseAsked = () => new Promise<void>((resolve) => (released ? resolve() : releaseWaiters.push(resolve)));

test('a wrong method on a known path, or an unknown path, is the stack gateway response (404 Not found), not a 405', async () => {
  for (const [method, path] of [
    ['DELETE', '/things/1'],
    ['POST', '/things/1'],
    ['GET', '/nowhere'],
    ['GET', '/things/1/deeper'],
  ] as const) {
    const res = await fetch(`${gateway.url}${path}`, { method });
    expect([method, path, res.status, await res.json()]).toEqual([method, path, 404, NOT_FOUND]);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('allow')).toBeNull();
  }
  expect((await fetch(`${gateway.url}/things/1`)).status).toBe(200);
}, 60_000);

test('every resource answers the CORS preflight the stack configures', async () => {
  for (const path of ['/things/1', '/things', '/stream']) {
    const res = await fetch(`${gateway.url}${path}`, { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-methods')).toBe('GET,POST,PUT,PATCH,DELETE,OPTIONS');
    expect(res.headers.get('access-control-allow-headers')).toBe(
      'authorization,content-type,x-request-id,last-event-id',
    );
    expect(res.headers.get('access-control-max-age')).toBe('600');
  }
});

test('the stream reaches the client as it is written: the prelude with the first write, the rest later', async () => {
  released = undefined;
  const res = await fetch(`${gateway.url}/stream?release=${encodeURIComponent(releaserUrl)}`, { method: 'POST' });
  // Status and headers arrived while the function is still waiting to write its second line.
  expect(res.status).toBe(201);
  expect(res.headers.get('x-probe')).toBe('yes');
  const reader = res.body!.getReader();
  const first = await reader.read();
  expect(new TextDecoder().decode(first.value)).toBe('first\n');
  await whenReleaseAsked();
  released!();
  let rest = '';
  for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
  expect(rest).toBe('second\n');
}, 60_000);

test('a function that fails before its first write gets a 502: its prelude was never sent', async () => {
  const res = await fetch(`${gateway.url}/stream?do=throw-before-write`, { method: 'POST' });
  expect(res.status).toBe(502);
  expect(await res.json()).toEqual({ success: false, message: 'Internal server error' });
}, 60_000);

test('a function that throws mid-stream ends that response; the gateway and other requests carry on', async () => {
  released = undefined;
  const res = await fetch(`${gateway.url}/stream?do=throw-mid-stream&release=${encodeURIComponent(releaserUrl)}`, {
    method: 'POST',
  });
  expect(res.status).toBe(201);
  const reader = res.body!.getReader();
  expect(new TextDecoder().decode((await reader.read()).value)).toBe('first\n');
  await whenReleaseAsked();
  released!();
  await expect(reader.read()).rejects.toThrow(); // cut short, not a clean end
  expect((await fetch(`${gateway.url}/things/1`)).status).toBe(200);
  const again = await fetch(`${gateway.url}/stream`, { method: 'POST' });
  expect(await again.text()).toBe('first\nsecond\n');
}, 60_000);

test('a stream that never ends is cut at the function timeout', async () => {
  const res = await fetch(`${gateway.url}/stream?do=never-end`, { method: 'POST' });
  expect(res.status).toBe(201);
  const reader = res.body!.getReader();
  expect(new TextDecoder().decode((await reader.read()).value)).toBe('first\n');
  await expect(reader.read()).rejects.toThrow(); // cut by the 15 s timeout (the test's own limit is 60 s)
  expect((await fetch(`${gateway.url}/stream`, { method: 'POST' })).status).toBe(201);
}, 60_000);
