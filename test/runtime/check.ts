import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createSocket } from 'node:dgram';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildFunctions, projectRoot, type BuiltFunction } from '../../infra/build.ts';
import { ensureTable, startDynalite } from '../../infra/local/emulators.ts';
import { manifestFunctions, type ManifestFunction } from '../../infra/routes.ts';

// The runtime check (`npm run test:runtime`, run by .ci/run): every bundle `npm run build` makes,
// loaded by AWS's own Lambda runtime interface client (aws-lambda-ric, the runtime of the
// nodejs24.x images; installed in test/runtime/ by .ci/run, as it builds native code) on this
// Node major, against a loopback Runtime API that records what the runtime posts:
//   - every bundle initialises (the runtime asks for its first invocation, no init error);
//   - a buffered route answers (an unauthenticated GET /chat: the 401 in the envelope);
//   - the streaming route streams: send-message for a seeded user and chat (dynalite, offline
//     provider), as Lambda's streaming response: prelude + 8 null bytes + SSE events with ids +
//     [DONE], and the reply is stored whole (status complete) when the invocation ends, which is
//     what a client that went away finds (the invocation runs on without it);
//   - a thrown error is posted to /invocation/{id}/error with its type (and the X-Ray cause), and
//     an error at import to /runtime/init/error, as Lambda reports them;
//   - as deployed with metrics and `-c tracing=true`: a request's EMF line on stdout, and its
//     DynamoDB call sent as an X-Ray subsegment of the invocation's trace to the daemon's UDP
//     address (a loopback socket here).
// Exits non-zero, naming what failed.

const RIC = join(projectRoot, 'test/runtime/node_modules/aws-lambda-ric/index.mjs');
/** How long to wait for what a function posts: a minute, generous for a loaded machine. */
const STARTUP_MS = 60_000;

interface Posted {
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
  trailers: Record<string, string | undefined>;
}

/** One runtime process against one loopback Runtime API: its invocations, one at a time. */
class RuntimeApi {
  private server!: Server;
  private events: { id: string; event: unknown }[] = [];
  private waitingNext: ((e: { id: string; event: unknown }) => void) | undefined;
  readonly posted: Posted[] = [];
  private listeners: (() => void)[] = [];
  nextAsked = 0;
  /** The X-Ray trace header of each invocation (Lambda's Lambda-Runtime-Trace-Id). */
  traceId = 'Root=1-00000000-000000000000000000000000;Sampled=0';

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method === 'GET' && req.url === '/2018-06-01/runtime/invocation/next') {
          this.nextAsked++;
          this.notify();
          const answer = (e: { id: string; event: unknown }) => {
            res.writeHead(200, {
              'content-type': 'application/json',
              'lambda-runtime-aws-request-id': e.id,
              'lambda-runtime-deadline-ms': String(Date.now() + 60_000),
              'lambda-runtime-invoked-function-arn': 'arn:aws:lambda:us-east-1:000000000000:function:runtime-check',
              'lambda-runtime-trace-id': this.traceId,
            });
            res.end(JSON.stringify(e.event));
          };
          const queued = this.events.shift();
          if (queued) answer(queued);
          else this.waitingNext = answer; // held, as Lambda holds it until there is work
          return;
        }
        this.posted.push({
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks),
          trailers: { ...req.trailers },
        });
        this.notify();
        res.writeHead(202, { 'content-type': 'application/json' });
        res.end('{"status":"OK"}');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  invoke(event: unknown): string {
    const e = { id: randomUUID(), event };
    if (this.waitingNext) {
      const answer = this.waitingNext;
      this.waitingNext = undefined;
      answer(e);
    } else this.events.push(e);
    return e.id;
  }

  private notify() {
    for (const l of this.listeners.splice(0)) l();
  }

  /** Resolves when `done()` holds, checked on every request the runtime makes. */
  async until<T>(what: string, done: () => T | undefined, ms = STARTUP_MS): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = done();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.listeners.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The runtime interface client serving one bundle, as the nodejs24.x image starts it. */
async function runtimeFor(
  b: BuiltFunction,
  env: Record<string, string>,
): Promise<{ api: RuntimeApi; proc: ChildProcess; output: () => string }> {
  const api = new RuntimeApi();
  const address = await api.start();
  let output = '';
  const proc = spawn(process.execPath, [RIC, 'index.handler'], {
    cwd: b.dir,
    env: {
      PATH: process.env.PATH,
      AWS_LAMBDA_RUNTIME_API: address,
      _HANDLER: 'index.handler',
      LAMBDA_TASK_ROOT: b.dir,
      AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
      AWS_LAMBDA_FUNCTION_NAME: b.name,
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1024',
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${b.name}`,
      AWS_LAMBDA_LOG_STREAM_NAME: 'runtime-check',
      NODE_OPTIONS: '--enable-source-maps',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  proc.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  return { api, proc, output: () => output };
}

async function stop({ api, proc }: { api: RuntimeApi; proc: ChildProcess }) {
  if (proc.exitCode === null && proc.signalCode === null) {
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  }
  await api.close();
}

const restEvent = (method: string, path: string, headers: Record<string, string>, body?: unknown) => ({
  resource: path,
  path: `/v1${path}`,
  httpMethod: method,
  headers,
  multiValueHeaders: {},
  queryStringParameters: null,
  multiValueQueryStringParameters: null,
  pathParameters: null,
  stageVariables: null,
  requestContext: {
    requestId: randomUUID(),
    stage: 'api',
    httpMethod: method,
    path: `/api/v1${path}`,
    identity: { sourceIp: '127.0.0.1' },
  },
  body: body === undefined ? null : JSON.stringify(body),
  isBase64Encoded: false,
});

async function main() {
  if (!existsSync(RIC)) {
    throw new Error(
      'aws-lambda-ric is not installed: `npm ci --prefix test/runtime` (needs autoconf, automake, libtool, cmake, make, g++; .ci/run installs them)',
    );
  }
  const started = Date.now();
  const outDir = await mkdtemp(join(tmpdir(), 'runtime-check-'));
  const dynamo = await startDynalite();
  const results: string[] = [];
  try {
    const fixture = (name: string, entry: string): ManifestFunction => ({
      name,
      entry,
      kind: 'http',
      timeoutSeconds: 30,
      memoryMb: 256,
      access: {},
    });
    const built = await buildFunctions({
      outDir,
      functions: [
        ...manifestFunctions,
        fixture('runtime-check-throws', 'test/runtime/fixtures/throws.ts'),
        fixture('runtime-check-init-error', 'test/runtime/fixtures/init-error.ts'),
      ],
    });
    const byName = new Map(built.map((b) => [b.name, b]));
    await ensureTable(dynamo.endpoint, 'runtime-check');
    const env: Record<string, string> = {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      TABLE_NAME: 'runtime-check',
      BUCKET_NAME: 'runtime-check',
      DYNAMODB_ENDPOINT: dynamo.endpoint,
      IDP_PRESET: 'google',
      GOOGLE_CLIENT_ID: 'runtime-check',
      SERVICE_JWT_SECRET: 'a-runtime-check-secret-that-is-long-enough',
      AI_PROVIDER: 'offline',
      LOG_LEVEL: 'WARN',
      PDF_FETCH_QUEUE_URL: 'http://127.0.0.1:9/queue/pdf-fetch',
      PDF_EXTRACT_QUEUE_URL: 'http://127.0.0.1:9/queue/pdf-extract',
      PDF_OCR_QUEUE_URL: 'http://127.0.0.1:9/queue/pdf-ocr',
      PDF_EMBED_QUEUE_URL: 'http://127.0.0.1:9/queue/pdf-embed',
    };

    // 1. Every bundle initialises: the runtime imports it and asks for work, posting no init error.
    await Promise.all(
      manifestFunctions.map(async (fn) => {
        const r = await runtimeFor(byName.get(fn.name)!, env);
        try {
          await r.api.until(`${fn.name} to initialise`, () =>
            r.api.nextAsked > 0 || r.api.posted.length ? true : undefined,
          );
          assert.deepEqual(
            r.api.posted,
            [],
            `${fn.name}: init error posted: ${r.api.posted[0]?.body.toString()}\n${r.output()}`,
          );
        } catch (err) {
          throw new Error(`${fn.name}: ${(err as Error).message}\n${r.output()}`);
        } finally {
          await stop(r);
        }
      }),
    );
    results.push(`${manifestFunctions.length} bundles initialise under aws-lambda-ric`);

    // 2. A buffered route answers (no token: the 401 in the envelope).
    {
      const r = await runtimeFor(byName.get('list-chats')!, env);
      try {
        const id = r.api.invoke(restEvent('GET', '/chat', {}));
        const posted = await r.api.until('list-chats to answer', () => r.api.posted.find((p) => p.path.includes(id)));
        assert.equal(posted.path, `/2018-06-01/runtime/invocation/${id}/response`);
        const result = JSON.parse(posted.body.toString()) as {
          statusCode: number;
          body: string;
          headers: Record<string, string>;
        };
        assert.equal(result.statusCode, 401);
        assert.deepEqual(JSON.parse(result.body), {
          success: false,
          statusCode: 401,
          message: 'Missing Authorization header',
        });
      } finally {
        await stop(r);
      }
      results.push('a buffered route answers (GET /chat without a token: 401 in the envelope)');
    }

    // 3. The streaming route streams, for a user and chat seeded in dynalite.
    let token: string;
    {
      // This process signs the token and seeds the rows like the functions would, with their configuration.
      const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
      const { DynamoDBDocumentClient } = await import('@aws-sdk/lib-dynamodb');
      const { UserRepository } = await import('../../shared/users/user-repository.ts');
      const { ChatRepository } = await import('../../shared/chats/conversations/chat-repository.ts');
      const { ServiceTokens, serviceTokenSettings } = await import('../../shared/auth/service-token.ts');
      const { loadConfig } = await import('../../shared/config/all.ts');
      const functionConfig = loadConfig(env);
      const credentials = { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! };
      const db = DynamoDBDocumentClient.from(
        new DynamoDBClient({ region: env.AWS_REGION!, endpoint: env.DYNAMODB_ENDPOINT!, credentials }),
      );
      const userId = randomUUID().replace(/-/g, '').slice(0, 24);
      await new UserRepository(db, env.TABLE_NAME!).createProfile(
        userId,
        {
          providerUserId: `runtime-check|${userId}`,
          email: 'runtime@example.com',
          verified: true,
          picture: null,
          role: 'user',
        },
        new Date().toISOString(),
      );
      const chat = await new ChatRepository(db, env.TABLE_NAME!).create(
        userId,
        { type: 'text', name: 'runtime check' },
        new Date().toISOString(),
      );
      token = await new ServiceTokens(serviceTokenSettings(functionConfig), () => new Date()).issue({
        userId,
        role: 'user',
      });
      const r = await runtimeFor(byName.get('send-message')!, env);
      try {
        const id = r.api.invoke(
          restEvent(
            'POST',
            '/message/logged-in',
            { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            { chatId: chat.id, prompt: 'Hello from the runtime check', stream: true },
          ),
        );
        const posted = await r.api.until('send-message to stream', () => r.api.posted.find((p) => p.path.includes(id)));
        assert.equal(posted.path, `/2018-06-01/runtime/invocation/${id}/response`);
        assert.equal(posted.headers['lambda-runtime-function-response-mode'], 'streaming');
        assert.equal(posted.headers['content-type'], 'application/vnd.awslambda.http-integration-response');
        assert.equal(posted.headers['transfer-encoding'], 'chunked');
        const delimiter = posted.body.indexOf(Buffer.alloc(8));
        assert.ok(delimiter > 0, 'no 8-byte delimiter after the prelude');
        const prelude = JSON.parse(posted.body.subarray(0, delimiter).toString()) as {
          statusCode: number;
          headers: Record<string, string>;
        };
        assert.equal(prelude.statusCode, 200);
        assert.match(prelude.headers['content-type'] ?? '', /^text\/event-stream/);
        const sse = posted.body.subarray(delimiter + 8).toString();
        assert.match(sse, /^id: 1\nevent: start\n/m);
        const deltas = [...sse.matchAll(/^data: (\{"content":.*\})$/gm)].map(
          (m) => JSON.parse(m[1]!).content as string,
        );
        assert.match(deltas.join(''), /^No language model/); // the offline provider's reply, word by word
        assert.ok(deltas.length > 10, `${deltas.length} deltas`);
        assert.ok(sse.trimEnd().endsWith('data: [DONE]'), `the stream does not end with [DONE]:\n${sse.slice(-300)}`);
        assert.equal(posted.trailers['lambda-runtime-function-error-type'], undefined);
        // Deployed, a client that goes away does not stop the invocation (AWS: streamed responses
        // are not interrupted when the client's connection breaks), and the instance may be frozen
        // once it ends: the reply must be stored whole by then, whoever still reads the stream.
        const { MessageRepository } = await import('../../shared/chats/conversations/message-repository.ts');
        const [, reply] = await new MessageRepository(db, env.TABLE_NAME!).all(chat.id);
        assert.equal(reply?.status, 'complete');
        assert.equal(reply?.message, deltas.join(''));
      } finally {
        await stop(r);
      }
      results.push(
        'the streaming route streams: prelude, 8 null bytes, SSE events with ids, [DONE]; the reply stored whole',
      );
    }

    // 4. A thrown error, and an error at import, as Lambda reports them.
    {
      const r = await runtimeFor(byName.get('runtime-check-throws')!, env);
      try {
        const id = r.api.invoke({});
        const posted = await r.api.until('the thrown error', () => r.api.posted.find((p) => p.path.includes(id)));
        assert.equal(posted.path, `/2018-06-01/runtime/invocation/${id}/error`);
        const error = JSON.parse(posted.body.toString()) as {
          errorType: string;
          errorMessage: string;
          trace: string[];
        };
        assert.equal(error.errorType, 'TypeError');
        assert.equal(error.errorMessage, 'the runtime check asked for this error');
        // The trace points at the TypeScript source (the bundle's source map, NODE_OPTIONS=--enable-source-maps).
        assert.match(error.trace[1] ?? '', /test\/runtime\/fixtures\/throws\.ts:3/);
        assert.match(String(posted.headers['lambda-runtime-function-xray-error-cause']), /"type":"TypeError"/);
      } finally {
        await stop(r);
      }
      const init = await runtimeFor(byName.get('runtime-check-init-error')!, env);
      try {
        const posted = await init.api.until('the init error', () => init.api.posted[0]);
        assert.equal(posted.path, '/2018-06-01/runtime/init/error');
        assert.match(String(posted.headers['lambda-runtime-function-error-type']), /^Runtime\.|Error$/);
        assert.match(
          JSON.parse(posted.body.toString()).errorMessage as string,
          /the runtime check asked for this init error/,
        );
        assert.equal(init.api.nextAsked, 0);
      } finally {
        await stop(init);
      }
      results.push(
        'a thrown error reaches /invocation/{id}/error with its type and source-mapped trace; an import error /runtime/init/error',
      );
    }

    // 5. Metrics and tracing on, as the stack sets them: one EMF line per request, and the
    // function's DynamoDB call as a subsegment of the invocation's trace, sent to the X-Ray daemon.
    {
      const daemon = createSocket('udp4');
      const sent: string[] = [];
      daemon.on('message', (m) => sent.push(m.toString()));
      await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));
      const traceRoot = `1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replace(/-/g, '').slice(0, 24)}`;
      const r = await runtimeFor(byName.get('list-chats')!, {
        ...env,
        POWERTOOLS_METRICS_NAMESPACE: 'RuntimeCheck',
        POWERTOOLS_TRACE_ENABLED: 'true',
        AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${daemon.address().port}`,
        LOG_LEVEL: 'ERROR',
      });
      r.api.traceId = `Root=${traceRoot};Parent=53995c3f42cd8ad8;Sampled=1`;
      try {
        const id = r.api.invoke(restEvent('GET', '/chat', { authorization: `Bearer ${token}` }));
        const posted = await r.api.until('list-chats to answer with tracing on', () =>
          r.api.posted.find((p) => p.path.includes(id)),
        );
        assert.equal(posted.path, `/2018-06-01/runtime/invocation/${id}/response`, posted.body.toString());
        assert.equal(
          (JSON.parse(posted.body.toString()) as { statusCode: number }).statusCode,
          200,
          posted.body.toString(),
        );
        const emf = await r.api.until('the EMF line', () =>
          r
            .output()
            .split('\n')
            .map((line) => line.slice(line.indexOf('{')))
            .find((line) => line.includes('"_aws"') && line.includes('"route":"GET /chat"')),
        );
        const metrics = JSON.parse(emf) as {
          _aws: { CloudWatchMetrics: { Namespace: string }[] };
          Requests: number;
          ClientErrors: number;
          ServerErrors: number;
        };
        assert.equal(metrics._aws.CloudWatchMetrics[0]?.Namespace, 'RuntimeCheck');
        assert.deepEqual([metrics.Requests, metrics.ClientErrors, metrics.ServerErrors], [1, 0, 0]);
        const subsegment = await r.api.until(
          'a subsegment at the X-Ray daemon',
          () =>
            sent
              .map((m) => m.slice(m.indexOf('\n') + 1))
              .find((m) => m.includes(`"trace_id":"${traceRoot}"`) && m.includes('"name":"DynamoDB"')),
          10_000,
        );
        const traced = JSON.parse(subsegment) as {
          type: string;
          parent_id: string;
          namespace: string;
          aws: { operation: string; table_name: string };
        };
        assert.deepEqual(
          [traced.type, traced.parent_id, traced.namespace, traced.aws.table_name],
          ['subsegment', '53995c3f42cd8ad8', 'aws', 'runtime-check'],
        );
        assert.match(traced.aws.operation, /^(GetItem|Query)$/);
      } catch (err) {
        throw new Error(`${(err as Error).message}\n${r.output()}\nsent to the daemon: ${sent.join('\n')}`);
      } finally {
        await stop(r);
        daemon.close();
      }
      results.push(
        "with metrics and tracing on: a request's EMF line, and its DynamoDB call as an X-Ray subsegment of the invocation's trace",
      );
    }
  } finally {
    await dynamo.stop();
    await rm(outDir, { recursive: true, force: true });
  }
  console.log(
    `Runtime check passed in ${((Date.now() - started) / 1000).toFixed(1)} s (aws-lambda-ric, Node ${process.version}):`,
  );
  for (const r of results) console.log(`  ✓ ${r}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error('Runtime check FAILED:', err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);
