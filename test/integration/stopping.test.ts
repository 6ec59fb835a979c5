import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { LOCAL_CREDENTIALS, LOCAL_REGION, startEmulators } from '#infra/local/emulators.ts';
import { signLocalIdToken } from '#infra/local/local-idp.ts';
import { type OpenAiTestServer, startOpenAiTestServer } from '#test/helpers/openai-server.ts';
import { startServerProcess, type ServerProcess } from '#test/helpers/server-process.ts';
import { until } from '#test/helpers/until.ts';

// Stopping `npm start` (npm itself, as a terminal or a process manager signals it): SIGINT and
// SIGTERM stop the server and free DATA_DIR, it says when it has stopped; SIGHUP (npm does not
// pass it on) still leaves no server behind; two Ctrl-C in a row lose nothing acknowledged.

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'stopping-'));
  dirs.push(dir);
  return dir;
};

const running = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Polls until the process is gone (fails the test after `ms`, generous for a loaded machine). */
async function gone(pid: number, ms = 60_000): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; ) {
    if (!running(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

async function serverPid(dataDir: string): Promise<number> {
  return Number(await readFile(join(dataDir, 'runtime.pid'), 'utf8'));
}

test.each(['SIGINT', 'SIGTERM'] as const)(
  '%s to npm stops the server, frees DATA_DIR and says so',
  async (signal) => {
    const dataDir = await tempDir();
    const server = await startServerProcess({ DATA_DIR: dataDir }, { viaNpm: true });
    const pid = await serverPid(dataDir);
    expect(pid).not.toBe(server.pid); // npm, then the server it runs
    server.signal(signal);
    expect(await server.exited).toBe(0);
    expect(await gone(pid)).toBe(true);
    expect(existsSync(join(dataDir, 'runtime.pid'))).toBe(false);
    expect(server.output()).toMatch(new RegExp(`${signal}: stopping[^]*\\nStopped\\.\\n`));
  },
  60_000,
);

/** A service token of a new user of a running server (signed by the local provider in its DATA_DIR). */
async function signedIn(url: string, dataDir: string, email: string): Promise<string> {
  const idToken = await signLocalIdToken(dataDir, { email });
  const res = await fetch(`${url}/auth`, { method: 'POST', headers: { authorization: `Bearer ${idToken}` } });
  return ((await res.json()) as any).data.token;
}

/** Polls the output until it matches (fails the test after `ms`, generous for a loaded machine). */
/** A streamed reply to "Count" in a new chat, the model saying `reply` and held after `deltas` deltas. */
async function heldReply(url: string, token: string, ai: OpenAiTestServer, reply: string, deltas: number) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const chat = (await (
    await fetch(`${url}/chat`, { method: 'POST', headers, body: JSON.stringify({ type: 'text' }) })
  ).json()) as any;
  ai.setReply(reply);
  const release = ai.holdStreamAfter(deltas);
  const res = await fetch(`${url}/message/logged-in`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ chatId: chat.data.id, prompt: 'Count', stream: true }),
  });
  return { res, release };
}

async function printed(server: ServerProcess, pattern: RegExp, ms = 60_000): Promise<void> {
  for (const until = Date.now() + ms; Date.now() < until; ) {
    if (pattern.test(server.output())) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`not printed: ${pattern}\n${server.output()}`);
}

test('one Ctrl-C under npm start (its whole process group): one stop, and the reply in flight is finished', async () => {
  const ai = await startOpenAiTestServer();
  const dataDir = await tempDir();
  // Its own process group, signalled as a terminal signals its foreground group: npm and the
  // server both get SIGINT, and npm passes its copy on to the server.
  const server = await startServerProcess(
    { DATA_DIR: dataDir, OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: ai.baseURL },
    { viaNpm: true, detached: true },
  );
  try {
    const token = await signedIn(server.url, dataDir, 'drain@example.com');
    const { res, release } = await heldReply(server.url, token, ai, 'one two three four five six', 2);
    expect(res.status).toBe(200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while ((text.match(/"content"/g) ?? []).length < 2) text += (await reader.read()).value ?? '';

    process.kill(-server.pid, 'SIGINT');
    await printed(server, /SIGINT: stopping/);
    release();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += chunk.value;
    expect(text).toContain('data: [DONE]');
    expect(text).not.toContain('event: error');
    expect(await server.exited).toBe(0);
    expect(server.output().match(/^\w+: stopping.*$/gm)).toEqual([
      'SIGINT: stopping (up to 10 s for work in flight; again to stop at once)...',
    ]);
    expect(server.output()).toMatch(/\nStopped\.\n/);
  } finally {
    await ai.close();
  }
}, 60_000);

test('SIGHUP to npm (not passed on by npm): the server notices and stops too', async () => {
  const dataDir = await tempDir();
  const server = await startServerProcess({ DATA_DIR: dataDir }, { viaNpm: true });
  const pid = await serverPid(dataDir);
  server.signal('SIGHUP');
  expect(await server.exited).toBe('SIGHUP');
  expect(await gone(pid)).toBe(true);
  expect(existsSync(join(dataDir, 'runtime.pid'))).toBe(false);
  // Its output still reaches the pipe npm handed it.
  await until('the Stopped. line', () => server.output().includes('Stopped.'));
  expect(server.output()).toMatch(/parent process gone: stopping[\s\S]*Stopped\./);
}, 60_000);

test('a second Ctrl-C while stopping: the server exits at once, and every upload acknowledged is kept', async () => {
  const dataDir = await tempDir();
  const ai = await startOpenAiTestServer();
  let server: ServerProcess | undefined = await startServerProcess({
    DATA_DIR: dataDir,
    OPENAI_API_KEY: 'test-key',
    OPENAI_BASE_URL: ai.baseURL,
  });
  const idToken = await signLocalIdToken(dataDir, { email: 'twice@example.com' });
  const token = (
    (await (
      await fetch(`${server.url}/auth`, { method: 'POST', headers: { authorization: `Bearer ${idToken}` } })
    ).json()) as any
  ).data.token;
  const pdf = Buffer.from('%PDF-1.4\n% not parsed by this test\n');
  const uploaded: string[] = [];
  for (let i = 0; i < 10; i++) {
    const res = await fetch(`${server.url}/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ fileName: `f${i}.pdf`, contentType: 'application/pdf', size: pdf.byteLength }),
    });
    const { data } = (await res.json()) as any;
    const put = await fetch(data.uploadUrl, { method: 'PUT', headers: data.uploadHeaders, body: pdf });
    expect(put.status).toBe(200);
    uploaded.push(data.fileId);
  }
  // A reply held in flight: the first Ctrl-C's drain cannot end before the second one comes.
  const { res: reply, release } = await heldReply(server.url, token, ai, 'one two three', 1);
  const reader = reply.body!.pipeThrough(new TextDecoderStream()).getReader();
  for (let text = ''; !text.includes('"content"'); ) text += (await reader.read()).value ?? '';

  server.signal('SIGINT');
  await printed(server, /SIGINT: stopping \(/); // the first is being handled: the second finds it stopping
  server.signal('SIGINT');
  expect(await server.exited).toBe(130);
  release();
  await reader.cancel().catch(() => undefined);
  await ai.close();
  expect(server.output()).toMatch(/SIGINT: stopping now/);
  expect(existsSync(join(dataDir, 'runtime.pid'))).toBe(false);
  server = undefined;

  // The bucket on disk, read with an emulator of our own.
  const emulators = await startEmulators({ fauxqsDataPath: join(dataDir, 'fauxqs') });
  const s3 = new S3Client({
    endpoint: emulators.fauxqsEndpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    forcePathStyle: true,
  });
  try {
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: 'chat-service-files', Prefix: 'uploads/' }));
    const kept = (listed.Contents ?? []).map((o) => o.Key!.replace(/^uploads\/[^/]+\/|\.pdf$/g, '')).sort();
    expect(kept).toEqual([...uploaded].sort());
  } finally {
    s3.destroy();
    await emulators.stop();
  }
}, 90_000);
