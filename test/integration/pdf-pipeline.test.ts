import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createId } from '#shared/ids.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '#infra/local/emulators.ts';
import type { FailedFile, ProcessingFile } from '#shared/files/file-record.ts';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { messagesIn } from '#test/helpers/queues.ts';
import { fixturePdf, knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';
import { createAiProvider } from '#shared/ai/provider.ts';
import { createDocumentClient } from '#shared/clients.ts';
import { retrieverFor } from '#shared/retrieval/retrieve.ts';
import { createS3Client } from '#shared/s3-client.ts';
import { until } from '#test/helpers/until.ts';
import { runAtEmbed } from '#test/helpers/runs.ts';
import { chunkIndexes } from '#test/helpers/chunk-items.ts';

// The SQS pipeline under load and faults, with an embedding provider that takes 16 inputs per
// request: fan-out, the number of embedding requests, 429s, redelivery, a poison message, reuse
// of identical bytes, idempotency, deletion. PDF_SYNC_WAIT_MS is short so the 202 path is used.

const BATCH = 16;
let app: TestApp;
let alice: string;
let bob: string;
let db: DynamoDBDocumentClient;
let s3: S3Client;
let sqs: SQSClient;
let bigPdf: Uint8Array;

beforeAll(async () => {
  [bigPdf, app] = await Promise.all([
    makeTextPdf(300),
    startTestApp({
      model: 'openai',
      pdfs: { '/hello.pdf': { body: await fixturePdf('hello-world.pdf') } },
      env: {
        EMBEDDING_BATCH_SIZE: String(BATCH),
        PDF_SYNC_WAIT_MS: '1500',
      },
    }),
  ]);
  app.pdfs.serve('/big.pdf', { body: bigPdf });
  app.ai.embeddingBatchLimit = BATCH;
  [{ token: alice }, { token: bob }] = await Promise.all([
    app.signIn('alice@example.com'),
    app.signIn('bob@example.com'),
  ]);
  const endpoint = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  db = DynamoDBDocumentClient.from(new DynamoDBClient({ ...endpoint, endpoint: app.endpoints.dynamodb }));
  s3 = new S3Client({ ...endpoint, endpoint: app.endpoints.fauxqs, forcePathStyle: true });
  sqs = new SQSClient({ ...endpoint, endpoint: app.endpoints.fauxqs });
});
afterAll(async () => {
  await app?.stop();
  db?.destroy();
  s3?.destroy();
  sqs?.destroy();
});
beforeEach(() => {
  app.ai.reset();
  app.ai.embeddingBatchLimit = BATCH;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function newFile(
  token = alice,
  fileName = 'doc.pdf',
  size = 1000,
): Promise<{ fileId: string; uploadUrl: string; downloadUrl: string; uploadHeaders: Record<string, string> }> {
  const res = await app.request('POST', '/upload', { token, body: { fileName, contentType: 'application/pdf', size } });
  expect(res.status).toBe(201);
  return res.body.data;
}

async function statusOf(fileId: string, token = alice) {
  return (await app.request('GET', `/message/pdf/${fileId}`, { token })).body.data.embeddingsData;
}

/** Polls GET /message/pdf/{id} until the run finishes (gives up after a minute, generous for a loaded machine). */
async function finished(fileId: string, token = alice, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const data = await statusOf(fileId, token);
    if (data.status === 'completed' || data.status === 'failed') return data;
    if (Date.now() > deadline) throw new Error(`still ${data.status} (${data.stage})`);
    await sleep(100);
  }
}

/**
 * The finished run of a POST /message/pdf answer: 200 carries it; 202 (the run outlasted
 * PDF_SYNC_WAIT_MS, as it may on a loaded machine) is followed until the run finishes.
 */
async function ingested(res: { status: number; body: any }, token = alice) {
  expect([200, 202]).toContain(res.status);
  const data = res.body.data.embeddingsData;
  return res.status === 200 ? data : finished(data.fileId, token);
}

/** The chunk items of a file, one index each (what the tests count). */
const chunkItems = (fileId: string) => chunkIndexes(db, app.tableName, fileId);

async function objectsUnder(prefix: string) {
  const out = await s3.send(new ListObjectsV2Command({ Bucket: app.bucket, Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key!);
}

test('a 300-page PDF uploaded through the presigned URL fans out, completes, and costs the minimum embedding requests', async () => {
  const file = await newFile(alice, 'book.pdf', bigPdf.length);
  const put = await fetch(file.uploadUrl, { method: 'PUT', headers: file.uploadHeaders, body: bigPdf });
  expect(put.status).toBe(200);
  const chat = (await app.request('POST', '/chat', { token: alice, body: { type: 'file', name: 'book' } })).body.data;

  const res = await app.request('POST', '/message/pdf', {
    token: alice,
    body: { url: file.downloadUrl, fileId: file.fileId, chatId: chat.id },
  });
  expect([200, 202]).toContain(res.status);
  if (res.status === 202) expect(res.body.data.embeddingsData.status).toBe('processing');
  const data = await finished(file.fileId);
  expect(data).toMatchObject({ status: 'completed', pages: 300, size: bigPdf.length });

  // Fan-out: one part per embedding request, as few requests as the provider's limit allows. The
  // 300 pages are read in two ranges, so the parts are planned knowing every chunk: evened out,
  // the largest no larger than the run's share.
  const requests = app.ai.embeddingRequests();
  expect(requests.length).toBe(Math.ceil(data.chunks / BATCH));
  expect(requests.length).toBeGreaterThan(5);
  const sizes = requests.map((r) => (r.input as string[]).length).sort((a, b) => b - a);
  expect(sizes[0]).toBe(Math.ceil(data.chunks / requests.length));
  expect(sizes[0]).toBeLessThanOrEqual(BATCH);
  expect(await chunkItems(file.fileId)).toHaveLength(data.chunks);
  expect(await objectsUnder(`work/${file.fileId}/`)).toEqual([]); // work files cleaned up
  // What is kept: the packed vectors, each page's text, and the PDF to draw pages from.
  const kept = await objectsUnder(`vectors/${file.fileId}/`);
  expect(kept.filter((k) => k.endsWith('.pvec'))).toHaveLength(1);
  const blocks = Math.ceil(data.pages / 32); // page texts, 32 pages an object
  expect(kept.filter((k) => /\/text-pages-\d{5}\.json$/.test(k))).toHaveLength(blocks);
  expect(kept.filter((k) => k.endsWith('/source.pdf'))).toHaveLength(1);
  expect(kept).toHaveLength(blocks + 2);

  // A known sentence of page 217 is found, on page 217.
  const retrieveSources = retrieverFor(app.config, createDocumentClient(app.config), createS3Client(app.config));
  const sentence = knownSentence(217, 5);
  const [best] = await retrieveSources({
    chatId: chat.id,
    prompt: sentence,
    provider: await createAiProvider(app.config),
    k: 3,
  });
  expect(best).toMatchObject({ fileId: file.fileId, page: 217, quote: sentence });

  // The same bytes again for the same user: embeddings reused, nothing paid.
  app.ai.reset();
  app.ai.embeddingBatchLimit = BATCH;
  const again = await newFile(alice, 'copy.pdf');
  await app.request('POST', '/message/pdf', {
    token: alice,
    body: { url: `${app.pdfs.url}/big.pdf`, fileId: again.fileId },
  });
  const copy = await finished(again.fileId);
  expect(copy).toMatchObject({ status: 'completed', pages: 300, chunks: data.chunks, reusedFrom: file.fileId });
  expect(app.ai.count('/v1/embeddings')).toBe(0);
  expect(await chunkItems(again.fileId)).toHaveLength(data.chunks);

  // Another user pays for their own copy.
  const bobs = await newFile(bob, 'book.pdf');
  await app.request('POST', '/message/pdf', {
    token: bob,
    body: { url: `${app.pdfs.url}/big.pdf`, fileId: bobs.fileId },
  });
  const theirs = await finished(bobs.fileId, bob);
  expect(theirs.reusedFrom).toBeUndefined();
  expect(app.ai.count('/v1/embeddings')).toBe(requests.length);
}, 120_000);

test('the embedding server answering 429 a few times: the file still completes', async () => {
  const { fileId } = await newFile();
  app.ai.failNext(3, 429, { only: 'embeddings' });
  await app.request('POST', '/message/pdf', { token: alice, body: { url: `${app.pdfs.url}/hello.pdf`, fileId } });
  expect(await finished(fileId)).toMatchObject({ status: 'completed', chunks: 1 });
  expect(app.ai.count('/v1/embeddings')).toBe(4);
});

test('an embedding request the provider refuses (400) fails the file at once: EMBEDDING_FAILED, a 500', async () => {
  const { fileId } = await newFile();
  app.ai.failNext(1, 400, { only: 'embeddings' });
  // force: alice embedded these bytes before, and would otherwise get them back for free.
  const res = await app.request('POST', '/message/pdf', {
    token: alice,
    body: { url: `${app.pdfs.url}/hello.pdf`, fileId, force: true },
  });
  // A 500 when the run failed within PDF_SYNC_WAIT_MS; on a loaded machine a 202, then the failure.
  expect([500, 202]).toContain(res.status);
  if (res.status === 500)
    expect(res.body).toMatchObject({ success: false, statusCode: 500, errors: [{ code: 'EMBEDDING_FAILED' }] });
  expect(await finished(fileId)).toMatchObject({ status: 'failed', failure: { reason: 'EMBEDDING_FAILED' } });
  expect(app.ai.count('/v1/embeddings')).toBe(1); // not retried
});

test('the same fileId again starts nothing new; force: true ingests again and replaces the chunks', async () => {
  const { fileId } = await newFile();
  const first = await app.request('POST', '/message/pdf', {
    token: alice,
    body: { url: `${app.pdfs.url}/hello.pdf`, fileId },
  });
  const firstRun = await ingested(first);
  expect(firstRun.status).toBe('completed');
  const gets = () => app.pdfs.requests.filter((r) => r.path === '/hello.pdf' && r.method === 'GET').length;
  const before = { gets: gets(), embeds: app.ai.count('/v1/embeddings') };

  const second = await app.request('POST', '/message/pdf', {
    token: alice,
    body: { url: `${app.pdfs.url}/hello.pdf`, fileId },
  });
  expect(second.status).toBe(200);
  expect(second.body.data.embeddingsData.completedAt).toBe(firstRun.completedAt);
  expect({ gets: gets(), embeds: app.ai.count('/v1/embeddings') }).toEqual(before);

  // Another URL for the same file is not passed over in silence: it needs force.
  const moved = await app.request('POST', '/message/pdf', {
    token: alice,
    body: { url: `${app.pdfs.url}/hello-moved.pdf`, fileId },
  });
  expect(moved.status).toBe(409);
  expect(moved.body).toMatchObject({
    success: false,
    statusCode: 409,
    message: expect.stringMatching(/another URL.*force: true/),
  });
  expect({ gets: gets(), embeds: app.ai.count('/v1/embeddings') }).toEqual(before);

  const forced = await app.request('POST', '/message/pdf', {
    token: alice,
    body: { url: `${app.pdfs.url}/hello.pdf`, fileId, force: true },
  });
  const forcedRun = await ingested(forced);
  expect(forcedRun.status).toBe('completed');
  expect(forcedRun.completedAt > firstRun.completedAt).toBe(true);
  expect(gets()).toBe(before.gets + 1);
  expect(app.ai.count('/v1/embeddings')).toBe(before.embeds + 1); // forced: not reused
  expect(await chunkItems(fileId)).toHaveLength(1);
  // The old run's vectors, page texts and PDF are gone: one run's are left (the completion's
  // clean-up runs after the file reads completed, so it is awaited).
  const kept = await until(
    "the old run's objects deleted",
    () => objectsUnder(`vectors/${fileId}/`),
    (keys) => keys.length <= 3,
  );
  expect(kept).toHaveLength(3);
  expect(new Set(kept.map((k) => k.split('/')[2]!.replace(/\.pvec$/, ''))).size).toBe(1);
});

describe('messages', () => {
  /** A run in processing, started the way POST /message/pdf starts one, without queuing it. */
  async function processingRun(parts: number) {
    const { FileRepository } = await import('#shared/files/file-repository.ts');
    const { FileStorage, partKey } = await import('#shared/files/storage.ts');
    const { dynamo, tableName } = await import('#shared/clients.ts');
    const { s3Client } = await import('#shared/s3-client.ts');
    const files = new FileRepository(dynamo(), tableName());
    const storage = new FileStorage(s3Client(), app.bucket);
    const { fileId } = await newFile();
    const runId = await runAtEmbed(files, fileId, {
      url: `${app.pdfs.url}/hello.pdf`,
      sha256: 'x'.repeat(64),
      pages: 1,
      chunks: parts * 3,
      partsTotal: parts,
    });
    const chunks = [0, 1, 2].map((i) => ({
      index: i,
      text: `Sentence number ${i} of the part.`,
      page: 1,
      pageEnd: 1,
      pageStarts: [[0, 1]],
      tokens: 8,
    }));
    await storage.put(
      partKey(fileId, runId, 0),
      JSON.stringify({ fileId, runId, part: 0, chunks }),
      'application/json',
    );
    return { files, fileId, runId, key: partKey(fileId, runId, 0) };
  }
  const send = (stage: 'pdf-embed' | 'pdf-extract', body: object) =>
    sqs.send(new SendMessageCommand({ QueueUrl: app.queues[stage].url, MessageBody: JSON.stringify(body) }));

  test('a message delivered twice adds no chunk and counts its part once', async () => {
    const { files, fileId, runId, key } = await processingRun(2);
    const body = { fileId, runId, part: 0, key };
    await send('pdf-embed', body);
    await send('pdf-embed', body);
    await until('the part counted', async () => ((await files.get(fileId)) as ProcessingFile).partsDone === 1);
    expect(await drained('pdf-embed')).toBe(0); // the second delivery handled too
    const record = (await files.get(fileId))!;
    expect(record).toMatchObject({ status: 'processing', partsDone: 1, partsTotal: 2 });
    expect(await chunkItems(fileId)).toHaveLength(3);
    // Delivered again later: still three chunks, still one part counted.
    await send('pdf-embed', body);
    expect(await drained('pdf-embed')).toBe(0);
    expect(await chunkItems(fileId)).toHaveLength(3);
    expect(((await files.get(fileId)) as ProcessingFile).partsDone).toBe(1);
  });

  const held = (url: string) => messagesIn(sqs, url);
  /** Until the message has left the stage's queue and its DLQ (redriven, then taken by pdf-dead-letter). */
  const drained = (stage: 'pdf-embed' | 'pdf-extract') =>
    until(
      `${stage} and its DLQ to drain`,
      async () => (await held(app.queues[stage].url)) + (await held(app.queues[stage].dlqUrl)),
      (left) => left === 0,
    );

  test('a poison message ends in the DLQ and the file is marked failed; the dead-letter consumer keeps that failure', async () => {
    const { files, fileId, runId } = await processingRun(1);
    const poison = { fileId, runId, part: 0, key: `work/${fileId}/${runId}/missing.json` };
    await send('pdf-embed', poison);
    const failed = await finished(fileId);
    expect(failed).toMatchObject({ status: 'failed', failure: { reason: 'PROCESSING_FAILED' } });
    expect(failed.failure.message).toMatch(/after 5 attempts/);
    // Redriven to the DLQ and consumed there: the stage's own (more precise) failure stays.
    expect(await drained('pdf-embed')).toBe(0);
    expect(((await files.get(fileId)) as FailedFile).failure).toEqual(failed.failure);
  });

  test('a body that is not a valid message goes to the DLQ, where it changes nothing', async () => {
    await send('pdf-extract', { fileId: 'not-a-cuid', runId: 'x', key: '' });
    expect(await drained('pdf-extract')).toBe(0);
  });
});

describe('ownership and deletion', () => {
  test("another user's file is 404 everywhere; a text chat or another user's chat cannot take the PDF", async () => {
    const { fileId } = await newFile(alice);
    const url = `${app.pdfs.url}/hello.pdf`;
    const seen = app.pdfs.count('/hello.pdf');
    expect((await app.request('POST', '/message/pdf', { token: bob, body: { url, fileId } })).status).toBe(404);
    expect((await app.request('GET', `/message/pdf/${fileId}`, { token: bob })).status).toBe(404);
    expect((await app.request('DELETE', `/upload/${fileId}`, { token: bob })).status).toBe(404);
    expect(
      (await app.request('POST', '/message/pdf', { token: alice, body: { url, fileId: createId() } })).status,
    ).toBe(404);

    const textChat = (await app.request('POST', '/chat', { token: alice, body: { type: 'text' } })).body.data;
    const bobsChat = (await app.request('POST', '/chat', { token: bob, body: { type: 'file' } })).body.data;
    const toText = await app.request('POST', '/message/pdf', {
      token: alice,
      body: { url, fileId, chatId: textChat.id },
    });
    expect(toText.status).toBe(400);
    expect(toText.body.message).toMatch(/type file/);
    expect(
      (await app.request('POST', '/message/pdf', { token: alice, body: { url, fileId, chatId: bobsChat.id } })).status,
    ).toBe(404);
    expect(app.pdfs.count('/hello.pdf')).toBe(seen); // nothing was fetched
  });

  test('bad bodies are 400 with the fields named', async () => {
    const res = await app.request('POST', '/message/pdf', {
      token: alice,
      body: { url: 'http://x', fileId: 'nope', extra: 1 },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: any) => e.path)).toEqual(expect.arrayContaining(['body.fileId']));
    const upload = await app.request('POST', '/upload', {
      token: alice,
      body: { fileName: 'a.png', contentType: 'image/png', size: 10 },
    });
    expect(upload.status).toBe(400);
    const huge = await app.request('POST', '/upload', {
      token: alice,
      body: { fileName: 'a.pdf', contentType: 'application/pdf', size: 26 * 1024 * 1024 },
    });
    expect(huge.status).toBe(400);
    expect(huge.body.errors[0]).toMatchObject({ path: 'body.size', code: 'TOO_LARGE' });
    expect((await app.request('POST', '/message/pdf', { body: { url: 'http://x', fileId: createId() } })).status).toBe(
      401,
    );
  });

  test('DELETE /upload removes the object, the chunks, the vectors, the attachment and the record', async () => {
    const hello = await fixturePdf('hello-world.pdf');
    const file = await newFile(alice, 'gone.pdf', hello.byteLength);
    expect((await fetch(file.uploadUrl, { method: 'PUT', headers: file.uploadHeaders, body: hello })).status).toBe(200);
    const chat = (await app.request('POST', '/chat', { token: alice, body: { type: 'file' } })).body.data;
    const res = await app.request('POST', '/message/pdf', {
      token: alice,
      body: { url: file.downloadUrl, fileId: file.fileId, chatId: chat.id },
    });
    expect((await ingested(res)).status).toBe('completed');
    expect(await chunkItems(file.fileId)).toHaveLength(1);
    expect((await objectsUnder(`uploads/`)).some((k) => k.includes(file.fileId))).toBe(true);

    const del = await app.request('DELETE', `/upload/${file.fileId}`, { token: alice });
    expect(del.status).toBe(200);
    expect(del.body.data).toEqual({ fileId: file.fileId, deleted: true });
    expect(await chunkItems(file.fileId)).toHaveLength(0);
    expect((await objectsUnder('')).filter((k) => k.includes(file.fileId))).toEqual([]);
    expect((await app.request('GET', `/message/pdf/${file.fileId}`, { token: alice })).status).toBe(404);
    const attachments = await db.send(
      new QueryCommand({
        TableName: app.tableName,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :f)',
        ExpressionAttributeValues: { ':pk': `CHAT#${chat.id}`, ':f': 'FILE#' },
      }),
    );
    expect(attachments.Items).toEqual([]);
    expect((await app.request('DELETE', `/upload/${file.fileId}`, { token: alice })).status).toBe(404);
  });
});
