import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '#infra/local/emulators.ts';
import { loadFunction } from '#infra/local/runtime.ts';
import { lambdaContext } from '#infra/local/lambda-runtime.ts';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { messagesIn, sqsRecord } from '#test/helpers/queues.ts';
import { makeTextPdf } from '#test/helpers/make-pdf.ts';
import { chunkIndexes } from '#test/helpers/chunk-items.ts';
import { partKey, sourceKey } from '#shared/files/storage.ts';

// The ingestion pipeline under faults, each ending in a terminal state with every chunk stored
// exactly once: an embedding part that keeps failing (the file fails with EMBEDDING_FAILED and a
// forced re-run completes), one that fails a few times or never answers (retried, completes),
// every stage's message delivered again while the run is in flight, and a consumer that throws
// in the middle of a batch (only that record is reported; the batch delivered again changes
// nothing). The embedding server sits behind a gate this test controls: it fails, holds or
// passes each request by what the request embeds.

let app: TestApp;
let gate: http.Server;
let token: string;
let db: DynamoDBDocumentClient;
let sqs: SQSClient;

type Verdict = 'pass' | 'hold' | number;
/** Decides each embedding request from its inputs; `pass` by default. */
let rule: (inputs: string[]) => Verdict = () => 'pass';
const held = new Set<() => void>();
const embedCalls: string[][] = [];

async function startGate(target: () => string) {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      let inputs: string[] = [];
      try {
        const parsed = JSON.parse(body.toString('utf8'));
        inputs = [parsed.input].flat().filter((s: unknown): s is string => typeof s === 'string');
      } catch {
        // not JSON: pass it on
      }
      const verdict = req.url?.endsWith('/embeddings') ? rule(inputs) : 'pass';
      if (req.url?.endsWith('/embeddings')) embedCalls.push(inputs);
      if (typeof verdict === 'number') {
        res
          .writeHead(verdict, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: `gate says ${verdict}`, type: 'server_error' } }));
        return;
      }
      if (verdict === 'hold') await new Promise<void>((release) => held.add(release));
      if (res.destroyed) return;
      const upstream = await fetch(`${target()}${req.url}`, {
        method: req.method,
        headers: { 'content-type': 'application/json', authorization: String(req.headers.authorization ?? '') },
        body,
      });
      res
        .writeHead(upstream.status, { 'content-type': 'application/json' })
        .end(Buffer.from(await upstream.arrayBuffer()));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return server;
}
const releaseHeld = () => {
  for (const release of held) release();
  held.clear();
};

beforeAll(async () => {
  // The model's stand-in is named at each request: it starts with the app, after the gate.
  gate = await startGate(() => app.ai.url);
  app = await startTestApp({
    model: 'openai',
    pdfs: true,
    env: {
      OPENAI_BASE_URL: `http://127.0.0.1:${(gate.address() as AddressInfo).port}/v1`,
      OPENAI_TIMEOUT_MS: '3000',
      OPENAI_MAX_RETRIES: '0', // SQS redelivery does the retrying, so each attempt is visible
      CHUNK_TOKENS: '120',
      CHUNK_OVERLAP_TOKENS: '10',
      CHUNKS_PER_PART: '4',
      EMBEDDING_CONCURRENCY: '2',
      PDF_SYNC_WAIT_MS: '0',
    },
  });
  ({ token } = await app.signIn('pipeline-faults@example.com'));
  const endpoint = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  db = DynamoDBDocumentClient.from(new DynamoDBClient({ ...endpoint, endpoint: app.endpoints.dynamodb }));
  sqs = new SQSClient({ ...endpoint, endpoint: app.endpoints.fauxqs });
});
afterAll(async () => {
  releaseHeld();
  await app?.stop();
  db?.destroy();
  sqs?.destroy();
  gate?.closeAllConnections();
  await new Promise<void>((r) => gate?.close(() => r()));
});
beforeEach(() => {
  rule = () => 'pass';
  embedCalls.length = 0;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const status = async (fileId: string) =>
  (await app.request('GET', `/message/pdf/${fileId}`, { token })).body.data.embeddingsData;

let documents = 0;
/** Ingests a PDF never seen before (the same bytes would reuse earlier embeddings), or again with force. */
async function ingest(o: { fileId?: string; force?: boolean; path?: string } = {}) {
  const path = o.path ?? `/doc-${++documents}.pdf`;
  if (!o.path) app.pdfs.serve(path, { body: await makeTextPdf(11 + documents) });
  const fileId =
    o.fileId ??
    (
      await app.request('POST', '/upload', {
        token,
        body: { fileName: 'doc.pdf', contentType: 'application/pdf', size: 5000 },
      })
    ).body.data.fileId;
  const res = await app.request('POST', '/message/pdf', {
    token,
    body: { url: `${app.pdfs.url}${path}`, fileId, ...(o.force && { force: true }) },
  });
  expect([200, 202]).toContain(res.status);
  return fileId as string;
}

/** Polls `read` until `ok`; gives up after a minute (generous for a loaded machine), naming what it saw. */
async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await sleep(50);
  }
}
const settled = (fileId: string) =>
  until(
    () => status(fileId),
    (s) => s.status !== 'processing',
    `file ${fileId} to leave processing`,
  );

/** The chunk items of a file: one per index 0..n-1, or the test says which are missing or doubled. */
const chunkIndexesOf = (fileId: string) => chunkIndexes(db, app.tableName, fileId);
async function expectEveryChunkOnce(fileId: string, chunks: number) {
  expect(chunks).toBeGreaterThan(4);
  expect(await chunkIndexesOf(fileId)).toEqual(Array.from({ length: chunks }, (_, i) => i));
}
/** Each part counted exactly once (the stored counter and set agree); the number of parts. */
async function expectEveryPartOnce(fileId: string): Promise<number> {
  const r = await rawRecord(fileId);
  expect(r.partsTotal).toBeGreaterThan(1);
  expect(r.partsDone).toBe(r.partsTotal);
  expect([...(r.doneParts ?? [])].sort((a: number, b: number) => a - b)).toEqual(
    Array.from({ length: r.partsTotal }, (_, i) => i),
  );
  return r.partsTotal;
}
const rawRecord = async (fileId: string) =>
  (await db.send(new GetCommand({ TableName: app.tableName, Key: { PK: `FILE#${fileId}`, SK: 'META' } }))).Item!;

/** Inputs that carry text of page `page` (the known sentences end with "(folio <page>.<i>)"). */
const mentionsPage = (inputs: string[], page: number) => inputs.some((t) => t.includes(`(folio ${page}.`));

test('a part whose embedding keeps failing fails the file cleanly; after the provider recovers a forced run completes, every chunk once', async () => {
  rule = (inputs) => (mentionsPage(inputs, 5) ? 500 : 'pass');
  const fileId = await ingest();
  const failed = await settled(fileId);
  expect(failed).toMatchObject({
    status: 'failed',
    failure: { reason: 'EMBEDDING_FAILED', message: expect.stringMatching(/after 5 attempts/) },
  });
  expect(embedCalls.filter((c) => mentionsPage(c, 5)).length).toBeGreaterThanOrEqual(5); // maxReceiveCount, then given up

  rule = () => 'pass';
  await ingest({ fileId, force: true, path: `/doc-${documents}.pdf` });
  const done = await settled(fileId);
  expect(done.status).toBe('completed');
  await expectEveryChunkOnce(fileId, done.chunks);
});

test('a part that fails twice, and one whose request is never answered, are retried and the file completes with every chunk once', async () => {
  let failures = 0;
  let stalls = 0;
  rule = (inputs) => {
    if (mentionsPage(inputs, 3) && failures < 2) {
      failures++;
      return 503;
    }
    if (mentionsPage(inputs, 9) && stalls < 1) {
      stalls++;
      return 'hold'; // the client's timeout ends it
    }
    return 'pass';
  };
  const fileId = await ingest();
  const done = await settled(fileId);
  expect(done.status).toBe('completed');
  await expectEveryPartOnce(fileId);
  expect([failures, stalls]).toEqual([2, 1]);
  await expectEveryChunkOnce(fileId, done.chunks);
  releaseHeld();
});

test('every stage’s message delivered again mid-run, and a consumer that throws mid-batch: one chunk per index, each part counted once', async () => {
  rule = () => 'hold'; // embedding waits: the run sits at its embed stage
  const fileId = await ingest();
  const inFlight = await until(
    () => rawRecord(fileId),
    (r) => r.stage === 'embed' && r.partsTotal > 1,
    'the run to reach embed',
  );
  const { runId, partsTotal } = inFlight as { runId: string; partsTotal: number };

  // SQS delivers again (at-least-once): each stage's message, twice.
  const send = (stage: 'pdf-fetch' | 'pdf-extract' | 'pdf-embed', body: object) =>
    sqs.send(new SendMessageCommand({ QueueUrl: app.queues[stage].url, MessageBody: JSON.stringify(body) }));
  for (let i = 0; i < 2; i++) {
    await send('pdf-fetch', { fileId, runId });
    await send('pdf-extract', { fileId, runId, key: sourceKey(fileId, runId) });
    await send('pdf-embed', { fileId, runId, part: 0, key: partKey(fileId, runId, 0) });
  }

  // A batch of three whose middle record throws (its part file does not exist), as Lambda would deliver it.
  const handler = (await loadFunction('functions/pdf-embed.ts')) as (
    e: SQSEvent,
    c: unknown,
  ) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>;
  const record = (messageId: string, body: object) =>
    sqsRecord(app.queues['pdf-embed'].arn, { messageId, body: JSON.stringify(body) });
  const batch: SQSEvent = {
    Records: [
      record('good-0', { fileId, runId, part: 0, key: partKey(fileId, runId, 0) }),
      record('poison', { fileId, runId, part: partsTotal + 5, key: `work/${fileId}/${runId}/missing.json` }),
      record('good-1', { fileId, runId, part: 1, key: partKey(fileId, runId, 1) }),
    ],
  };
  const first = handler(batch, lambdaContext('pdf-embed', 60_000));

  // The fetch and extract duplicates handled while embedding is held (their queues empty: taken and deleted).
  await until(
    async () =>
      (await messagesIn(sqs, app.queues['pdf-fetch'].url)) + (await messagesIn(sqs, app.queues['pdf-extract'].url)),
    (n) => n === 0,
    'the fetch and extract duplicates to be handled',
  );
  rule = () => 'pass';
  releaseHeld();
  // Only the throwing record is certain to be reported (a good one may also be, when its held
  // request timed out meanwhile: a retryable failure). SQS delivers the reported ones again.
  const failed = (await first).batchItemFailures.map((f) => f.itemIdentifier);
  expect(failed).toContain('poison');
  const redelivered = batch.Records.filter((r) => failed.includes(r.messageId) && r.messageId !== 'poison');
  if (redelivered.length)
    expect((await handler({ Records: redelivered }, lambdaContext('pdf-embed', 60_000))).batchItemFailures).toEqual([]);

  const done = await settled(fileId);
  expect(done.status).toBe('completed');
  expect(await expectEveryPartOnce(fileId)).toBe(partsTotal);
  await expectEveryChunkOnce(fileId, done.chunks);

  // The whole batch delivered again after completion: nothing changes.
  const before = await rawRecord(fileId);
  const again = await handler(batch, lambdaContext('pdf-embed', 60_000));
  expect(again.batchItemFailures.map((f) => f.itemIdentifier)).toEqual(
    expect.not.arrayContaining(['good-0', 'good-1']),
  );
  expect(await rawRecord(fileId)).toEqual(before);
  await expectEveryChunkOnce(fileId, done.chunks);
});
