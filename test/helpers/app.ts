import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { startLocalRuntime, type LocalRuntime, type LocalRuntimeOptions } from '../../infra/local/runtime.ts';
import { signLocalIdToken, type IdTokenOptions } from '../../infra/local/local-idp.ts';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../infra/local/emulators.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from './openai-server.ts';
import { startBedrockTestServer, type BedrockTestServer } from './bedrock-server.ts';
import { startPdfServer, type Behaviour, type PdfServer } from './pdf-server.ts';
import { startJwksServer, type JwksServer } from './jwks-server.ts';
import { startCohereRerankTestServer, type CohereRerankTestServer } from './rerank-servers.ts';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.ts';
import { startS3Recorder, type S3Recorder } from './s3-recorder.ts';

// Starts the service the way `npm start` does (same gateway, handlers, pollers), against the
// suite's emulators, with its own table, queues and bucket, and the stand-ins a test asks for
// (model, PDF server, identity provider, reranker, webhook receiver, a recorder of S3 requests;
// payments and S3 Vectors are the local runtime's own). Tests talk to it over real HTTP; stop()
// closes it all.
//
//   app = await startTestApp({ model: 'openai', pdfs: { '/a.pdf': { body } }, user: 'me@example.com' });
//   app.ai.setReply('Hi'); app.request('POST', '/chat', { token: app.token, body });
//   afterAll(() => app?.stop());

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Sent as is (for malformed JSON and other raw payloads). */
  rawBody?: string;
  headers?: Record<string, string>;
}

/** What a test asks for: the runtime's settings and the stand-ins to start with it. */
export type TestAppOptions = Partial<
  Pick<LocalRuntimeOptions, 'env' | 'pollers' | 'retryDelaySeconds' | 'onReady' | 'extraHostNames' | 'functionOutput'>
> & {
  /** Run the payment provider's stand-in (test/integration/payments.test.ts); off: orders carry `payment: null`. */
  payments?: boolean;
  /**
   * Start again on what a stopped app (stopped with `keep`) left: its table, queues, bucket and
   * data directory, as a redeployment with other settings would (test/integration/vector-store.test.ts).
   */
  after?: { resourcePrefix: string; dataDir: string };
  /** The model's stand-in, as `app.ai` (OpenAI-compatible, embeddings too) or `app.bedrock` (AI_PROVIDER=bedrock). */
  model?: 'openai' | 'bedrock';
  /** A loopback PDF server (`app.pdfs`), serving these paths (more can be served later). */
  pdfs?: true | Record<string, Behaviour>;
  /** A JWKS identity provider (`app.idp`), configured as the service's custom IdP. */
  idp?: boolean;
  /** A Cohere-compatible reranker (`app.reranker`), configured as the service's reranker. */
  reranker?: boolean;
  /** A webhook receiver (`app.webhooks`), for a user's backend. */
  webhooks?: boolean;
  /** The service's S3 requests through a recording pass-through (`app.s3Requests`), to see what it writes when. */
  recordS3?: boolean;
  /** The vector store (the runtime starts the S3 Vectors stand-in for 's3vectors'). */
  vectorStore?: 'packs' | 's3vectors';
  /** Sign this person in at start: `app.token`, `app.user`. */
  user?: string;
};

export interface TestApp extends Omit<LocalRuntime, 'stop'> {
  dataDir: string;
  /** The prefix of its table, queues and bucket (for `after`). */
  resourcePrefix: string;
  /** Stops it; `keep`: its data directory stays, for an app started `after` it. */
  stop(options?: { keep?: boolean }): Promise<void>;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<TestResponse<T>>;
  idToken(options: IdTokenOptions): Promise<string>;
  /** Signs in through POST /auth with a local-IdP token; returns the service token and user. */
  signIn(email: string, name?: string): Promise<{ token: string; user: any; status: number }>;
  /** Clients of the app's emulators, to arrange or inspect what the service stored (made once, closed by stop). */
  clients(): { db: DynamoDBDocumentClient; s3: S3Client };
  // The stand-ins: each throws unless the options asked for it.
  ai: OpenAiTestServer;
  bedrock: BedrockTestServer;
  pdfs: PdfServer;
  idp: JwksServer;
  reranker: CohereRerankTestServer;
  webhooks: WebhookReceiver;
  /** With `recordS3`: the service's S3 requests in arrival order (`PUT /bucket/key?partNumber=2&uploadId=…`). */
  s3Requests: string[];
  /** The service token and user of `options.user`. */
  token: string;
  user: any;
}

/**
 * Suites about other things send far more than a person would from one account; the per-user
 * limits are off unless a test sets them (test/security/limits.test.ts does).
 */
export const PER_USER_LIMITS_OFF = {
  RATE_LIMIT_MESSAGES_PER_MINUTE: '0',
  RATE_LIMIT_INGESTIONS_PER_MINUTE: '0',
  RATE_LIMIT_UPLOADS_PER_MINUTE: '0',
  RATE_LIMIT_PAGES_PER_MINUTE: '0',
  RATE_LIMIT_SHARED_READS_PER_MINUTE: '0',
  DAILY_TOKEN_BUDGET: '0',
  REPLIES_MAX_IN_FLIGHT_PER_USER: '0',
  RATE_LIMIT_FOLLOWS_PER_MINUTE: '0',
  FOLLOWS_MAX_IN_FLIGHT_PER_USER: '0',
  REPLY_MAX_FOLLOWERS: '0',
  // Offline replies stream word by word without the readable pace (the tests read them whole).
  OFFLINE_STREAM_DELAY_MS: '0',
};

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const standIns = await startStandIns(options);
  try {
    return await startWith(options, standIns);
  } catch (err) {
    await standIns.close();
    throw err;
  }
}

type StandIns = Partial<Pick<TestApp, 'ai' | 'bedrock' | 'pdfs' | 'idp' | 'reranker' | 'webhooks'>> & {
  s3?: S3Recorder;
  env: Record<string, string>;
  close(): Promise<void>;
  closeSources(): Promise<void>;
};

async function startStandIns(o: TestAppOptions): Promise<StandIns> {
  const started = await Promise.allSettled([
    o.model === 'openai' ? startOpenAiTestServer() : undefined,
    o.model === 'bedrock' ? startBedrockTestServer() : undefined,
    o.pdfs ? startPdfServer() : undefined,
    o.idp ? startJwksServer() : undefined,
    o.reranker ? startCohereRerankTestServer() : undefined,
    o.webhooks ? startWebhookReceiver() : undefined,
    o.recordS3 ? startS3Recorder(process.env.TEST_FAUXQS_ENDPOINT!) : undefined,
  ] as const);
  const up = started.flatMap((r) => (r.status === 'fulfilled' && r.value ? [r.value] : []));
  const close = async () => void (await Promise.all(up.map((s) => s.close())));
  const failed = started.find((r) => r.status === 'rejected');
  if (failed) {
    await close();
    throw failed.reason;
  }
  const [ai, bedrock, pdfs, idp, reranker, webhooks, s3] = started.map((r) =>
    r.status === 'fulfilled' ? r.value : undefined,
  ) as [
    OpenAiTestServer?,
    BedrockTestServer?,
    PdfServer?,
    JwksServer?,
    CohereRerankTestServer?,
    WebhookReceiver?,
    S3Recorder?,
  ];
  for (const [path, behaviour] of Object.entries(o.pdfs === true ? {} : (o.pdfs ?? {}))) pdfs!.serve(path, behaviour);
  const env: Record<string, string> = {
    ...(ai && { OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: ai.baseURL }),
    ...(bedrock && { AI_PROVIDER: 'bedrock', BEDROCK_ENDPOINT: bedrock.url }),
    ...(idp && { IDP_PRESET: 'custom', IDP_JWKS_URL: idp.url, IDP_ISSUER: idp.issuer, IDP_AUDIENCE: idp.audience }),
    ...(reranker && { RERANK_PROVIDER: 'cohere', RERANK_URL: reranker.url, RERANK_API_KEY: reranker.apiKey }),
    ...(o.vectorStore && { VECTOR_STORE: o.vectorStore }),
    ...(s3 && { S3_ENDPOINT: s3.url }),
  };
  // The PDF server first: a download it holds open (a drip) would keep the runtime's stop waiting.
  const closeSources = async () => {
    if (!pdfs || !up.includes(pdfs)) return;
    up.splice(up.indexOf(pdfs), 1);
    await pdfs.close();
  };
  return { ai, bedrock, pdfs, idp, reranker, webhooks, s3, env, close, closeSources };
}

/** A stand-in's handle, or an error that says which option starts it. */
function standIn<T>(value: T | undefined, option: string): T {
  if (value === undefined) throw new Error(`this test app was started without ${option}`);
  return value;
}

async function startWith(options: TestAppOptions, standIns: StandIns): Promise<TestApp> {
  const dynamodbEndpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  const fauxqsEndpoint = process.env.TEST_FAUXQS_ENDPOINT;
  if (!dynamodbEndpoint || !fauxqsEndpoint) throw new Error('The jest global setup did not start the emulators');
  const dataDir = options.after?.dataDir ?? (await mkdtemp(join(tmpdir(), 'service-test-')));
  const resourcePrefix = options.after?.resourcePrefix ?? `t${randomBytes(4).toString('hex')}-`;
  const runtime = await startLocalRuntime({
    port: 0,
    dataDir,
    persist: false,
    emulators: { dynamodbEndpoint, fauxqsEndpoint },
    resourcePrefix,
    log: false,
    retryDelaySeconds: options.retryDelaySeconds ?? 0,
    ...(options.pollers !== undefined && { pollers: options.pollers }),
    ...(options.onReady && { onReady: options.onReady }),
    ...(options.functionOutput && { functionOutput: options.functionOutput }),
    extraHostNames: options.extraHostNames ?? [],
    // Undelivered webhooks are retried at once (the provider's waits are hours).
    ...(options.payments && { paymentProvider: { dataDir, retryDelaysMs: [50, 100, 200, 400, 800] } }),
    // The periodic sweep runs only where a test asks for it (test/integration/retention.test.ts).
    // The keys of the IdP (the local one, or a stand-in) may take seconds to fetch on a loaded machine.
    env: {
      LOG_LEVEL: 'SILENT',
      SWEEP_INTERVAL_SECONDS: '0',
      IDP_JWKS_TIMEOUT_MS: '20000',
      ...PER_USER_LIMITS_OFF,
      ...standIns.env,
      ...options.env,
    },
  });

  async function request<T = any>(method: string, path: string, o: RequestOptions = {}): Promise<TestResponse<T>> {
    // A connection of its own per request: a kept-alive one can be closed by the gateway as it is
    // reused (docs/DECISIONS.md, "Tests that pass under load").
    const headers: Record<string, string> = { connection: 'close', ...o.headers };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    let body: string | undefined = o.rawBody;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${runtime.url}${path}`, { method, headers, ...(body !== undefined && { body }) });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON (an event stream): keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed as T, text };
  }

  async function signIn(email: string, name?: string) {
    const idToken = await signLocalIdToken(dataDir, { email, ...(name && { name }) });
    const res = await request('POST', '/auth', { token: idToken });
    if (res.status !== 200 && res.status !== 201) throw new Error(`sign-in failed: ${res.status} ${res.text}`);
    return { token: res.body.data.token as string, user: res.body.data.user, status: res.status };
  }

  let clients: { db: DynamoDBDocumentClient; s3: S3Client } | undefined;
  const local = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const signedIn = options.user
    ? await signIn(options.user).catch(async (err: unknown) => {
        await runtime.stop();
        throw err;
      })
    : undefined;
  const app = {
    ...runtime,
    dataDir,
    request,
    clients: () =>
      (clients ??= {
        db: DynamoDBDocumentClient.from(new DynamoDBClient({ ...local, endpoint: runtime.endpoints.dynamodb }), {
          marshallOptions: { removeUndefinedValues: true },
        }),
        s3: new S3Client({ ...local, endpoint: runtime.endpoints.fauxqs, forcePathStyle: true }),
      }),
    idToken: (o: IdTokenOptions) => signLocalIdToken(dataDir, o),
    signIn,
    resourcePrefix,
    async stop(options?: { keep?: boolean }) {
      clients?.db.destroy();
      clients?.s3.destroy();
      await standIns.closeSources();
      await runtime.stop();
      await standIns.close();
      if (!options?.keep) await rm(dataDir, { recursive: true, force: true });
    },
  };
  const handles = {
    ai: () => standIn(standIns.ai, "model: 'openai'"),
    bedrock: () => standIn(standIns.bedrock, "model: 'bedrock'"),
    pdfs: () => standIn(standIns.pdfs, 'pdfs'),
    idp: () => standIn(standIns.idp, 'idp'),
    reranker: () => standIn(standIns.reranker, 'reranker'),
    webhooks: () => standIn(standIns.webhooks, 'webhooks'),
    s3Requests: () => standIn(standIns.s3, 'recordS3').requests,
    token: () => standIn(signedIn, 'user').token,
    user: () => standIn(signedIn, 'user').user,
  };
  for (const [name, get] of Object.entries(handles)) Object.defineProperty(app, name, { get, enumerable: true });
  return app as TestApp;
}

/**
 * The app a test file's tests share: started in beforeAll (`options` may be made there, for what
 * takes awaiting, such as a PDF to serve), then `ready` for the file's own arranging, and stopped
 * in afterAll. What it returns stands for that app: read it inside tests and hooks, not while the
 * file is being collected.
 *
 *   const app = useTestApp({ model: 'openai', user: 'me@example.com' });
 *   test('…', async () => { await app.request('GET', '/me', { token: app.token }); });
 */
export function useTestApp(
  options: TestAppOptions | (() => Promise<TestAppOptions>) = {},
  { ready, timeout }: { ready?: (app: TestApp) => void | Promise<void>; timeout?: number } = {},
): TestApp {
  let started: TestApp | undefined;
  beforeAll(async () => {
    started = await startTestApp(typeof options === 'function' ? await options() : options);
    await ready?.(started);
  }, timeout);
  afterAll(() => started?.stop());
  return new Proxy({} as TestApp, {
    get(_, name) {
      if (!started) throw new Error('the test app starts in beforeAll: read it inside a test or a hook');
      return Reflect.get(started, name);
    },
  });
}
