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

// Starts the service the way `npm start` does (same gateway, handlers, pollers), against the
// suite's emulators, with its own table, queues and bucket. Tests talk to it over real HTTP.

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

export async function startTestApp(
  options: Partial<
    Pick<LocalRuntimeOptions, 'env' | 'pollers' | 'retryDelaySeconds' | 'onReady' | 'extraHostNames' | 'functionOutput'>
  > & {
    /** Run the payment provider's stand-in (test/integration/payments.test.ts); off: orders carry `payment: null`. */
    payments?: boolean;
    /**
     * Start again on what a stopped app (stopped with `keep`) left: its table, queues, bucket and
     * data directory, as a redeployment with other settings would (test/integration/vector-store.test.ts).
     */
    after?: { resourcePrefix: string; dataDir: string };
  } = {},
): Promise<TestApp> {
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
    env: { LOG_LEVEL: 'SILENT', SWEEP_INTERVAL_SECONDS: '0', ...PER_USER_LIMITS_OFF, ...options.env },
  });

  async function request<T = any>(method: string, path: string, o: RequestOptions = {}): Promise<TestResponse<T>> {
    const headers: Record<string, string> = { ...o.headers };
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

  let clients: { db: DynamoDBDocumentClient; s3: S3Client } | undefined;
  const local = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  return {
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
    idToken: (o) => signLocalIdToken(dataDir, o),
    async signIn(email, name) {
      const idToken = await signLocalIdToken(dataDir, { email, ...(name && { name }) });
      const res = await request('POST', '/auth', { token: idToken });
      if (res.status !== 200 && res.status !== 201) throw new Error(`sign-in failed: ${res.status} ${res.text}`);
      return { token: res.body.data.token, user: res.body.data.user, status: res.status };
    },
    resourcePrefix,
    async stop(options) {
      clients?.db.destroy();
      clients?.s3.destroy();
      await runtime.stop();
      if (!options?.keep) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
