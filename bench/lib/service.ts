import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { projectRoot, startLocalRuntime, type LocalRuntime } from '../../infra/local/runtime.ts';
import { signLocalIdToken } from '../../infra/local/local-idp.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from '../../test/helpers/openai-server.ts';
import { apiRequest, keepAliveAgent, request, type Timed } from './http.ts';

// The service as `npm start` runs it (startLocalRuntime: the same gateway, handlers and SQS
// pollers), against emulators of its own in a child process, with the AI provider pointed at
// the loopback OpenAI-compatible test server (instant replies and embeddings). Started once per
// `npm run bench` by the first benchmark that needs it.

export const TSX_CLI = join(projectRoot, 'node_modules/tsx/dist/cli.mjs');

export interface EmulatorsProcess {
  dynamodbEndpoint: string;
  fauxqsEndpoint: string;
  stop(): Promise<void>;
}

export async function startEmulatorsProcess(): Promise<EmulatorsProcess> {
  const child: ChildProcess = spawn(process.execPath, [TSX_CLI, join(projectRoot, 'bench/lib/emulators-process.ts')], {
    cwd: projectRoot,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the emulators did not start within 30 s')), 30_000);
    createInterface({ input: child.stdout! }).once('line', (l) => {
      clearTimeout(timer);
      resolve(l);
    });
    void exited.then(() => reject(new Error('the emulators process exited before starting')));
  });
  const endpoints = JSON.parse(line) as { dynamodbEndpoint: string; fauxqsEndpoint: string };
  return {
    ...endpoints,
    async stop() {
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface BenchService {
  runtime: LocalRuntime;
  ai: OpenAiTestServer;
  emulators: EmulatorsProcess;
  dataDir: string;
  /** Base URL of the API (ends in /api/v1). */
  url: string;
  /** Signs in through POST /auth; the service token and the user id. */
  signIn(email: string): Promise<{ token: string; userId: string }>;
  /** A JSON request to the API over a keep-alive connection. */
  api(method: string, path: string, token?: string, body?: unknown): Promise<Timed & { json: any }>;
  stop(): Promise<void>;
}

export async function startBenchService(env: Record<string, string> = {}): Promise<BenchService> {
  const emulators = await startEmulatorsProcess();
  const ai = await startOpenAiTestServer();
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-'));
  let runtime: LocalRuntime;
  try {
    runtime = await startLocalRuntime({
      port: 0,
      dataDir,
      persist: false,
      emulators,
      resourcePrefix: 'bench-',
      log: false,
      retryDelaySeconds: 1,
      env: {
        LOG_LEVEL: 'SILENT',
        OPENAI_API_KEY: 'bench-key',
        OPENAI_BASE_URL: ai.baseURL,
        // The bench measures our code, not retries of the test server.
        OPENAI_MAX_RETRIES: '0',
        // One bench user sends far more than the per-user limits allow a person.
        RATE_LIMIT_MESSAGES_PER_MINUTE: '0',
        RATE_LIMIT_INGESTIONS_PER_MINUTE: '0',
        RATE_LIMIT_UPLOADS_PER_MINUTE: '0',
        DAILY_TOKEN_BUDGET: '0',
        REPLIES_MAX_IN_FLIGHT_PER_USER: '0',
        RATE_LIMIT_FOLLOWS_PER_MINUTE: '0',
        FOLLOWS_MAX_IN_FLIGHT_PER_USER: '0',
        REPLY_MAX_FOLLOWERS: '0',
        ...env,
      },
    });
  } catch (err) {
    await ai.close();
    await emulators.stop();
    throw err;
  }
  const agent = keepAliveAgent();
  const api: BenchService['api'] = async (method, path, token, body) => {
    const res = await request(`${runtime.url}${path}`, apiRequest(method, token, body, agent));
    let json: unknown;
    try {
      json = res.body ? JSON.parse(res.body) : undefined;
    } catch {
      json = undefined;
    }
    return { ...res, json };
  };
  return {
    runtime,
    ai,
    emulators,
    dataDir,
    url: runtime.url,
    api,
    async signIn(email) {
      const idToken = await signLocalIdToken(dataDir, { email });
      let res = await api('POST', '/auth', idToken);
      // Once more after a 503 (the local identity provider's keys not fetched in time on a loaded machine).
      if (res.status === 503) res = await api('POST', '/auth', idToken);
      if (res.status !== 200 && res.status !== 201) throw new Error(`sign-in failed: ${res.status} ${res.body}`);
      return { token: res.json.data.token as string, userId: res.json.data.user.id as string };
    },
    async stop() {
      agent.destroy();
      await runtime.stop();
      await ai.close();
      await emulators.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** POST /upload, then PUT the PDF to the presigned URL it answers: the file's id and where to ingest it from. */
export async function uploadPdf(
  svc: BenchService,
  token: string,
  bytes: Uint8Array,
  fileName: string,
): Promise<{ fileId: string; downloadUrl: string }> {
  const upload = await svc.api('POST', '/upload', token, {
    fileName,
    contentType: 'application/pdf',
    size: bytes.byteLength,
  });
  if (upload.status !== 201) throw new Error(`POST /upload: ${upload.status} ${upload.body}`);
  const { fileId, uploadUrl, uploadHeaders, downloadUrl } = upload.json.data;
  const put = await request(uploadUrl, { method: 'PUT', headers: uploadHeaders, body: bytes });
  if (put.status !== 200) throw new Error(`PUT to the upload URL: ${put.status} ${put.body}`);
  return { fileId, downloadUrl };
}
