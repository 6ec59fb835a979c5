import { spawn } from 'node:child_process';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { GetQueueUrlCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { LOCAL_CREDENTIALS, LOCAL_REGION, startEmulators } from '#infra/local/emulators.ts';
import { ensureBucket } from '#infra/local/queues.ts';
import { startLocalRuntime, projectRoot, type LocalRuntime } from '#infra/local/runtime.ts';
import { LOCAL_IDP_JWKS_PATH } from '#infra/local/local-idp.ts';

// The local emulators as a developer's machine runs them: reachable on 127.0.0.1 only, the
// local S3 answering browsers by the deployed bucket's CORS rule, and every object and message
// on disk once acknowledged (a process killed with SIGKILL right after loses none).

const dirs: string[] = [];
const tempDir = async (prefix: string) => {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('bound to loopback', () => {
  let runtime: LocalRuntime;
  beforeAll(async () => {
    runtime = await startLocalRuntime({
      port: 0,
      dataDir: await tempDir('loopback-'),
      persist: true,
      pollers: false,
      log: false,
      env: { LOG_LEVEL: 'SILENT' },
    });
  });
  afterAll(() => runtime?.stop());

  test('dynalite, fauxqs and the gateway (with the local IdP) refuse connections to any other address', async () => {
    // 127.0.0.2 is this machine but not 127.0.0.1: only a server bound to every address (0.0.0.0)
    // accepts there, as this control server shows.
    const control = http.createServer();
    await new Promise<void>((r) => control.listen(0, '0.0.0.0', r));
    const controlPort = (control.address() as AddressInfo).port;
    const controlAccepts = await accepts('127.0.0.2', controlPort);
    control.close();
    expect(controlAccepts).toBe(true);

    const ports = {
      dynalite: Number(new URL(runtime.endpoints.dynamodb).port),
      fauxqs: Number(new URL(runtime.endpoints.fauxqs).port),
      gateway: runtime.port,
    };
    const reached: Record<string, [boolean, boolean]> = {};
    for (const [name, port] of Object.entries(ports))
      reached[name] = [await accepts('127.0.0.1', port), await accepts('127.0.0.2', port)];
    expect(reached).toEqual({ dynalite: [true, false], fauxqs: [true, false], gateway: [true, false] });
    // The local IdP's keys are served by the gateway, so they are on loopback too.
    expect((await fetch(`http://127.0.0.1:${runtime.port}${LOCAL_IDP_JWKS_PATH}`)).status).toBe(200);
  });
});

describe('CORS of the local S3', () => {
  const bucket = 'cors-test';
  let emulators: Awaited<ReturnType<typeof startEmulators>>;
  let s3: S3Client;
  let origin = '*';
  beforeAll(async () => {
    emulators = await startEmulators({
      corsRule: () => ({
        allowedMethods: ['PUT', 'GET', 'HEAD'],
        allowedOrigins: [origin],
        allowedHeaders: ['content-type', 'content-length', 'content-md5', 'x-amz-*'],
        exposedHeaders: ['etag'],
        maxAge: 3600,
      }),
    });
    await ensureBucket(emulators.fauxqsEndpoint, bucket);
    s3 = new S3Client({
      endpoint: emulators.fauxqsEndpoint,
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
      forcePathStyle: true,
    });
  });
  afterAll(async () => {
    s3?.destroy();
    await emulators?.stop();
  });

  const preflight = (url: string, headers: Record<string, string>) => fetch(url, { method: 'OPTIONS', headers });

  test('a browser preflight for a presigned PUT is allowed, and the PUT carrying Origin can be read', async () => {
    origin = 'http://localhost:3000';
    const url = await getSignedUrl(
      s3,
      new PutObjectCommand({ Bucket: bucket, Key: 'uploads/u/f.pdf', ContentType: 'application/pdf' }),
      { expiresIn: 60 },
    );
    const ok = await preflight(url, {
      origin,
      'access-control-request-method': 'PUT',
      'access-control-request-headers': 'content-type',
    });
    expect(ok.status).toBe(200);
    expect(Object.fromEntries([...ok.headers].filter(([k]) => k.startsWith('access-control-')))).toEqual({
      'access-control-allow-origin': origin,
      'access-control-allow-methods': 'PUT, GET, HEAD',
      'access-control-allow-headers': 'content-type',
      'access-control-expose-headers': 'etag',
      'access-control-max-age': '3600',
      'access-control-allow-credentials': 'true',
    });

    const put = await fetch(url, {
      method: 'PUT',
      headers: { origin, 'content-type': 'application/pdf' },
      body: '%PDF-1.4 test',
    });
    expect(put.status).toBe(200);
    expect(put.headers.get('access-control-allow-origin')).toBe(origin);
    expect(put.headers.get('access-control-expose-headers')).toBe('etag');
    expect(put.headers.get('etag')).toBeTruthy();
    const stored = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'uploads/u/f.pdf' }));
    expect(await stored.Body!.transformToString()).toBe('%PDF-1.4 test');
  });

  test('what the rule does not allow is refused as S3 refuses it', async () => {
    origin = 'http://localhost:3000';
    const url = `${emulators.fauxqsEndpoint}/${bucket}/uploads/u/f.pdf`;
    const refused = async (headers: Record<string, string>) => {
      const res = await preflight(url, headers);
      return [
        res.status,
        res.headers.get('access-control-allow-origin'),
        (await res.text()).match(/<Code>(\w+)<\/Code>/)?.[1],
      ];
    };
    expect(await refused({ origin: 'http://evil.example', 'access-control-request-method': 'PUT' })).toEqual([
      403,
      null,
      'AccessForbidden',
    ]);
    expect(await refused({ origin, 'access-control-request-method': 'DELETE' })).toEqual([
      403,
      null,
      'AccessForbidden',
    ]);
    expect(
      await refused({
        origin,
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'authorization',
      }),
    ).toEqual([403, null, 'AccessForbidden']);
    expect(await refused({ 'access-control-request-method': 'PUT' })).toEqual([400, null, 'BadRequest']);
    // x-amz-* matches any x-amz- header; with the default origin `*`, any origin gets `*`.
    origin = '*';
    const wildcard = await preflight(url, {
      origin: 'http://anywhere.example',
      'access-control-request-method': 'PUT',
      'access-control-request-headers': 'x-amz-checksum-crc32, content-type',
    });
    expect([
      wildcard.status,
      wildcard.headers.get('access-control-allow-origin'),
      wildcard.headers.get('access-control-allow-credentials'),
    ]).toEqual([200, '*', null]);
    // A request from a page not allowed still works for non-browsers; it just gets no CORS headers.
    origin = 'http://localhost:3000';
    const get = await fetch(url, { headers: { origin: 'http://evil.example' } });
    expect([get.status, get.headers.get('access-control-allow-origin')]).toEqual([200, null]);
  });
});

test('objects and messages acknowledged by a process killed with SIGKILL are there at the next start', async () => {
  const dataDir = await tempDir('write-through-');
  // A process that writes through the APIs, says so, then waits to be killed.
  const script = `
    import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
    import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
    import { LOCAL_CREDENTIALS, LOCAL_REGION, startEmulators } from './infra/local/emulators.ts';
    import { ensureBucket } from './infra/local/queues.ts';
    const e = await startEmulators({ fauxqsDataPath: ${JSON.stringify(join(dataDir, 'fauxqs'))} });
    const c = { endpoint: e.fauxqsEndpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
    await ensureBucket(e.fauxqsEndpoint, 'kept');
    const s3 = new S3Client({ ...c, forcePathStyle: true });
    for (let i = 0; i < 20; i++) await s3.send(new PutObjectCommand({ Bucket: 'kept', Key: 'o' + i, Body: 'body ' + i }));
    const sqs = new SQSClient(c);
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'kept' }));
    for (let i = 0; i < 5; i++) await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'message ' + i }));
    console.log('acknowledged');
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: projectRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('acknowledged') && resolve());
    child.once('exit', (code) => reject(new Error(`the writer exited (${code}) before acknowledging`)));
  });
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));

  const emulators = await startEmulators({ fauxqsDataPath: join(dataDir, 'fauxqs') });
  const c = { endpoint: emulators.fauxqsEndpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const s3 = new S3Client({ ...c, forcePathStyle: true });
  const sqs = new SQSClient(c);
  try {
    const bodies = await Promise.all(
      Array.from({ length: 20 }, async (_, i) =>
        (await s3.send(new GetObjectCommand({ Bucket: 'kept', Key: `o${i}` }))).Body!.transformToString(),
      ),
    );
    expect(bodies).toEqual(Array.from({ length: 20 }, (_, i) => `body ${i}`));
    const { QueueUrl: queueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: 'kept' }));
    const received = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
    );
    expect((received.Messages ?? []).map((m) => m.Body).sort()).toEqual([
      'message 0',
      'message 1',
      'message 2',
      'message 3',
      'message 4',
    ]);
  } finally {
    s3.destroy();
    sqs.destroy();
    await emulators.stop();
  }
}, 60_000);
