import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { LOCAL_CREDENTIALS, LOCAL_REGION, startDynalite } from '#infra/local/emulators.ts';
import { signLocalIdToken } from '#infra/local/local-idp.ts';
import { startServerProcess, type ServerProcess } from '#test/helpers/server-process.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from '#test/helpers/openai-server.ts';
import { knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';
import { startPdfServer } from '#test/helpers/pdf-server.ts';
import { until } from '#test/helpers/until.ts';
import { chunkIndexes } from '#test/helpers/chunk-items.ts';

// `npm start` stopped with Ctrl-C in the middle of an ingestion of a large PDF, with a slow
// embedding server, then started again on the same DATA_DIR: the file reaches `completed`, the
// parts embedded before the stop are not embedded again, and the table on disk holds every
// chunk exactly once (read back with a dynalite of our own once the process has exited).

let ai: OpenAiTestServer;
let gate: http.Server;
let dataDir: string;
let server: ServerProcess | undefined;

/** Embedding requests pass while `budget` lasts; then they are held unanswered (the stop lands mid-way). */
let budget = Number.POSITIVE_INFINITY;
let passed = 0;
const held = new Set<http.ServerResponse>();

beforeAll(async () => {
  ai = await startOpenAiTestServer();
  gate = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      if (req.url?.endsWith('/embeddings')) {
        if (budget <= 0) return void held.add(res);
        budget--;
        passed++;
      }
      const upstream = await fetch(`${ai.url}${req.url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer test-key' },
        body: Buffer.concat(chunks),
      });
      if (!res.destroyed)
        res
          .writeHead(upstream.status, { 'content-type': 'application/json' })
          .end(Buffer.from(await upstream.arrayBuffer()));
    });
  });
  await new Promise<void>((r) => gate.listen(0, '127.0.0.1', r));
  dataDir = await mkdtemp(join(tmpdir(), 'restart-ingestion-'));
});
afterAll(async () => {
  await server?.stop();
  for (const res of held) res.destroy();
  gate?.closeAllConnections();
  await new Promise<void>((r) => gate?.close(() => r()));
  await ai?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** The server's settings: its data directory, embeddings through the gate, small chunks in parts of four. */
const serverEnv = (dir: string) => ({
  DATA_DIR: dir,
  OPENAI_API_KEY: 'test-key',
  OPENAI_BASE_URL: `http://127.0.0.1:${(gate.address() as AddressInfo).port}/v1`,
  OPENAI_TIMEOUT_MS: '10000', // generous: an embedding that passes must not time out on a loaded machine
  OPENAI_MAX_RETRIES: '0',
  CHUNK_TOKENS: '120',
  CHUNK_OVERLAP_TOKENS: '10',
  CHUNKS_PER_PART: '4',
  PDF_SYNC_WAIT_MS: '0',
});

test('Ctrl-C mid-ingestion, start again: the file completes, nothing embedded twice, every chunk once', async () => {
  const env = { ...serverEnv(dataDir), EMBEDDING_CONCURRENCY: '1' };
  const pdf = await makeTextPdf(60);
  budget = 4;
  server = await startServerProcess(env);
  const first = server;
  const idToken = await signLocalIdToken(dataDir, { email: 'restart@example.com' });
  const token = (
    (await (
      await fetch(`${first.url}/auth`, { method: 'POST', headers: { authorization: `Bearer ${idToken}` } })
    ).json()) as any
  ).data.token as string;
  const call = async (base: string, method: string, path: string, body?: object) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body && { 'content-type': 'application/json' }) },
      ...(body && { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  // Upload through the presigned URL (the local S3), then ingest from the presigned GET URL.
  const upload = (
    await call(first.url, 'POST', '/upload', {
      fileName: 'big.pdf',
      contentType: 'application/pdf',
      size: pdf.byteLength,
    })
  ).body.data;
  const put = await fetch(upload.uploadUrl, { method: 'PUT', headers: upload.uploadHeaders, body: pdf });
  expect(put.status).toBe(200);
  const started = await call(first.url, 'POST', '/message/pdf', { url: upload.downloadUrl, fileId: upload.fileId });
  expect(started.status).toBe(202);

  // Wait until some parts are embedded and the rest wait on the (now silent) embedding server.
  const before = await until(
    'four parts embedded and the next one held',
    async () => (await call(first.url, 'GET', `/message/pdf/${upload.fileId}`)).body.data.embeddingsData,
    (e: any) => e.status === 'processing' && e.stage === 'embed' && e.progress?.parts?.done === 4 && held.size > 0,
  );
  expect(before).toMatchObject({ status: 'processing', stage: 'embed', progress: { parts: { done: 4 } } });
  const total = before.progress.parts.total as number;
  expect(total).toBeGreaterThan(8);

  expect(await first.stop()).toBe(0); // Ctrl-C: a clean exit although an ingestion was under way
  for (const res of held) res.destroy();
  held.clear();
  const passedBefore = passed;

  budget = Number.POSITIVE_INFINITY;
  server = await startServerProcess(env);
  const second = server;
  const after = await until(
    'the file to leave processing after the restart',
    async () => (await call(second.url, 'GET', `/message/pdf/${upload.fileId}`)).body.data.embeddingsData,
    (e: any) => e.status !== 'processing',
  );
  expect(after).toMatchObject({ status: 'completed', stage: 'done', pages: 60 });
  // Only the parts that were not done were embedded after the restart (one request per part).
  expect(passed - passedBefore).toBe(total - 4);
  expect(await server.stop()).toBe(0);
  server = undefined;

  // The table on disk: chunk items 0..n-1, each once.
  const dynalite = await startDynalite(join(dataDir, 'dynamodb'));
  try {
    const db = DynamoDBDocumentClient.from(
      new DynamoDBClient({ endpoint: dynalite.endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS }),
    );
    const indexes = await chunkIndexes(db, 'chat-service', upload.fileId);
    db.destroy();
    expect(indexes).toEqual(Array.from({ length: after.chunks }, (_, k) => k));
  } finally {
    await dynalite.stop();
  }
}, 300_000); // two starts of the server, a drain and a 60-page ingestion: generous for a loaded machine

test('kill -9 after completion and again mid-ingestion: both files answer with sources at the next start', async () => {
  const env = serverEnv(await mkdtemp(join(tmpdir(), 'restart-kill-')));
  const killGroup = async (s: ServerProcess) => {
    process.kill(-s.pid, 'SIGKILL'); // the whole process group, nothing gets to save anything
    expect(await s.exited).toBe('SIGKILL');
  };
  const pdfs = await startPdfServer();
  pdfs.serve('/small.pdf', { body: Buffer.from(await makeTextPdf(3, 8)) });
  pdfs.serve('/big.pdf', { body: Buffer.from(await makeTextPdf(20)) });
  try {
    budget = Number.POSITIVE_INFINITY;
    server = await startServerProcess(env, { detached: true });
    const idToken = await signLocalIdToken(env.DATA_DIR, { email: 'killed@example.com' });
    const token = (
      (await (
        await fetch(`${server.url}/auth`, { method: 'POST', headers: { authorization: `Bearer ${idToken}` } })
      ).json()) as any
    ).data.token as string;
    const call = async (method: string, path: string, body?: object) => {
      const res = await fetch(`${server!.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body && { 'content-type': 'application/json' }) },
        ...(body && { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const statusUntil = (fileId: string, done: (e: any) => boolean) =>
      until(
        `file ${fileId} to reach the awaited state`,
        async () => (await call('GET', `/message/pdf/${fileId}`)).body.data.embeddingsData,
        done,
      );
    const ingest = async (name: string) => {
      const chatId = (await call('POST', '/chat', { name, type: 'file' })).body.data.id as string;
      const fileId = (await call('POST', '/upload', { fileName: name, contentType: 'application/pdf', size: 1000 }))
        .body.data.fileId as string;
      expect((await call('POST', '/message/pdf', { url: `${pdfs.url}/${name}`, fileId, chatId })).status).toBe(202);
      return { chatId, fileId };
    };

    const small = await ingest('small.pdf');
    expect(await statusUntil(small.fileId, (e) => e.status !== 'processing')).toMatchObject({ status: 'completed' });
    await killGroup(server); // after completion

    server = await startServerProcess(env, { detached: true });
    budget = 0; // every embedding request of the big file is held
    const big = await ingest('big.pdf');
    expect(await statusUntil(big.fileId, (e) => e.stage === 'embed' && held.size > 0)).toMatchObject({
      status: 'processing',
      stage: 'embed',
    });
    await killGroup(server); // mid-ingestion
    for (const res of held) res.destroy();
    held.clear();

    budget = Number.POSITIVE_INFINITY;
    server = await startServerProcess(env, { detached: true });
    expect(await statusUntil(big.fileId, (e) => e.status !== 'processing')).toMatchObject({
      status: 'completed',
      pages: 20,
    });
    for (const [file, page] of [
      [small, 2],
      [big, 7],
    ] as const) {
      const answer = await call('POST', '/message/logged-in', { chatId: file.chatId, prompt: knownSentence(page, 3) });
      expect(answer.status).toBe(200);
      expect(answer.body.data.sources[0]).toMatchObject({ fileId: file.fileId, page });
    }
    expect(await server.stop()).toBe(0);
    server = undefined;
  } finally {
    await pdfs.close();
    await rm(env.DATA_DIR, { recursive: true, force: true });
  }
}, 300_000); // three starts of the server and two ingestions: generous for a loaded machine
