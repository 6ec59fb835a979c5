import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { randomBytes } from 'node:crypto';
import { startGateway, type Gateway } from '#infra/local/gateway.ts';
import { startFunctionInstances, type FunctionInstances } from '#infra/local/function-instances.ts';
import { startPoller } from '#infra/local/poller.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '#infra/local/emulators.ts';
import type { HttpRoute } from '#infra/routes.ts';

// Lambda-like isolation in the local runtime: each function runs in instances of its own (a
// process each, one invocation at a time, the manifest's memory and timeout). A function that
// exhausts its memory, throws from a timer, exits or never returns fails that invocation alone:
// the gateway answers the deployed stack's 502/504 and keeps serving every other route, and a
// pipeline message that kills its function every time ends in the DLQ. The misbehaving function
// is a test-only probe (test/infra/fixtures/probe-function.ts), bundled like a real one.

const PROBE = 'test/infra/fixtures/probe-function.ts';
const route = (name: string, path: string, limits: Pick<HttpRoute, 'timeoutSeconds' | 'memoryMb'>) => ({
  name,
  entry: PROBE,
  method: 'GET' as const,
  path,
  auth: 'idp' as const,
  shape: 'bare' as const,
  access: {},
  ...limits,
});

let functions: FunctionInstances;
let gateway: Gateway;
beforeAll(async () => {
  functions = startFunctionInstances({ env: { ...(process.env as Record<string, string>), AWS_REGION: LOCAL_REGION } });
  gateway = await startGateway({
    port: 0,
    log: false,
    invoker: functions,
    routes: [
      route('probe-steady', '/steady', { timeoutSeconds: 20, memoryMb: 256 }),
      route('probe-hostile', '/hostile', { timeoutSeconds: 20, memoryMb: 192 }),
      // Reached on purpose by the hang; long enough that a fresh instance's answer is not cut on a loaded machine.
      route('probe-hang', '/hang', { timeoutSeconds: 10, memoryMb: 192 }),
    ],
  });
}, 120_000);
afterAll(async () => {
  await gateway?.close();
  await functions?.close();
});

const get = async (path: string) => {
  const res = await fetch(`${gateway.url}${path}`);
  return { status: res.status, body: (await res.json()) as any };
};

test('a warm instance is reused, one invocation at a time; a busy one gets a sibling', async () => {
  const first = await get('/steady');
  const second = await get('/steady');
  expect(first.status).toBe(200);
  expect(second.body.pid).toBe(first.body.pid);
  expect(second.body.invocations).toBe(first.body.invocations + 1);
  expect(first.body.pid).not.toBe(process.pid);
  expect(first.body.cwd).toMatch(/node_modules\/\.cache\/local-functions\//); // run from its bundle, as Lambda does

  const [a, b] = await Promise.all([get('/hostile?do=none'), get('/hostile?do=none')]);
  expect(a.body.pid).not.toBe(b.body.pid);
  expect(functions.instances('probe-hostile')).toHaveLength(2);
}, 60_000);

test.each([
  ['exhaust-heap', 502, { success: false, message: 'Internal server error' }],
  ['exhaust-buffers', 502, { success: false, message: 'Internal server error' }],
  ['throw-async', 502, { success: false, message: 'Internal server error' }],
  ['exit', 502, { success: false, message: 'Internal server error' }],
  ['reject', 502, { success: false, message: 'Internal server error' }],
  ['malformed', 502, { success: false, message: 'Internal server error' }],
  ['hang', 504, { success: false, statusCode: 504, message: 'Endpoint request timed out' }],
])(
  'a function that does %s fails that request alone (%i) while another route keeps answering',
  async (what, status, body) => {
    const steady = (await get('/steady')).body.pid;
    // The probe behind /hang has a 10 s timeout; behind /hostile, 20 s (running out of memory takes a while).
    const path = what === 'hang' ? '/hang' : '/hostile';
    const failing = get(`${path}?do=${what}`);
    // Meanwhile the other function answers, from the same warm instance.
    const during = await get('/steady');
    expect(during).toEqual({ status: 200, body: expect.objectContaining({ pid: steady }) });
    expect(await failing).toEqual({ status, body });
    // The failing function itself serves its next request (a fresh instance where the last one died).
    expect((await get(`${path}?do=none`)).status).toBe(200);
  },
  60_000,
);

test('an instance that died is replaced; one whose handler only threw stays warm', async () => {
  const before = (await get('/hostile?do=none')).body.pid;
  await get('/hostile?do=reject');
  expect((await get('/hostile?do=none')).body.pid).toBe(before);
  await get('/hostile?do=exit');
  const after = (await get('/hostile?do=none')).body.pid;
  expect(after).not.toBe(before);
  expect(functions.instances('probe-hostile').map((i) => i.pid)).not.toContain(before);
}, 60_000);

test('an SQS message whose function dies on every attempt is redelivered, then lands in the DLQ', async () => {
  const sqs = new SQSClient({
    endpoint: process.env.TEST_FAUXQS_ENDPOINT,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
  const name = `isolation-${randomBytes(4).toString('hex')}`;
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
  const dlqArn = (
    await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }))
  ).Attributes!.QueueArn!;
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: '30',
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: '2' }),
      },
    }),
  );
  const queueArn = (
    await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queue.QueueUrl, AttributeNames: ['QueueArn'] }))
  ).Attributes!.QueueArn!;
  const failures: string[] = [];
  const poller = startPoller({
    name: 'probe-stage',
    sqs,
    queueUrl: queue.QueueUrl!,
    queueArn,
    batchSize: 1,
    concurrency: 1,
    timeoutSeconds: 10,
    memoryMb: 192,
    retryDelaySeconds: 0,
    invoker: functions,
    entry: PROBE,
    onError: (err) => failures.push((err as Error).message),
  });
  try {
    await sqs.send(new SendMessageCommand({ QueueUrl: queue.QueueUrl, MessageBody: 'exhaust-heap' }));
    let dead: string | undefined;
    for (let i = 0; i < 300 && !dead; i++) {
      const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlq.QueueUrl, WaitTimeSeconds: 1 }));
      dead = out.Messages?.[0]?.Body;
    }
    expect(dead).toBe('exhaust-heap');
    expect(failures).toEqual([expect.stringMatching(/OutOfMemory/), expect.stringMatching(/OutOfMemory/)]);
    // Meanwhile, and after, the HTTP side answered as usual.
    expect((await get('/steady')).status).toBe(200);
  } finally {
    await poller.stop();
    sqs.destroy();
  }
}, 120_000);
