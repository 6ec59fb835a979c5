import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { startTestApp, type TestApp, type TestResponse } from '#test/helpers/app.ts';
import { makeTextPdf } from '#test/helpers/make-pdf.ts';
import { uploadBytes } from '#test/helpers/files.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '#infra/local/emulators.ts';
import { aiProvider } from '#shared/ai/provider.ts';
import { estimateTokens } from '#shared/ai/tokens.ts';
import { ChunkRepository, type ChunkItem } from '#shared/files/chunk-repository.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import type { ProcessingFile } from '#shared/files/file-record.ts';
import { FileStorage, partKey, sourceKey } from '#shared/files/storage.ts';
import { UsageLedger } from '#shared/limits/usage-ledger.ts';
import { runEmbed } from '#shared/ingestion/embed-stage.ts';
import { runExtract } from '#shared/ingestion/extract-stage.ts';
import { runFetch } from '#shared/ingestion/fetch-stage.ts';
import type { PipelineDeps } from '#shared/ingestion/pipeline-deps.ts';
import { PackStore } from '#shared/retrieval/vector-store.ts';
import { stageQueues } from '#shared/ingestion/stage-queues.ts';

// A file deleted while the pipeline works on it leaves nothing behind (no
// work/<file>/<run>/part-*.json, no chunk items, no vectors), and the POST /message/pdf that
// was waiting for it answers 404 instead of 500. The pollers are off: this test runs the stages
// itself with the service's own code, and the deletion happens at an exact point inside a stage
// (a storage or repository subclass calls DELETE /upload there and waits for it to finish), so
// every run interleaves the same way, with no sleeps.

let app: TestApp;
let token: string;
let db: DynamoDBDocumentClient;
let s3: S3Client;
let sqs: SQSClient;
let pdf: Uint8Array;
const tally = { deletions: 0 };

beforeAll(async () => {
  app = await startTestApp({
    pollers: false,
    env: { CHUNK_TOKENS: '120', CHUNK_OVERLAP_TOKENS: '10', CHUNKS_PER_PART: '2', PDF_SYNC_WAIT_MS: '20000' },
  });
  ({ token } = await app.signIn('deleter@example.com'));
  const endpoint = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  db = DynamoDBDocumentClient.from(new DynamoDBClient({ ...endpoint, endpoint: app.endpoints.dynamodb }), {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  s3 = new S3Client({ ...endpoint, endpoint: app.endpoints.fauxqs, forcePathStyle: true });
  sqs = new SQSClient({ ...endpoint, endpoint: app.endpoints.fauxqs });
  pdf = await makeTextPdf(6);
});
afterAll(async () => {
  db?.destroy();
  s3?.destroy();
  sqs?.destroy();
  await app?.stop();
  console.log(
    `Deleted-file leftovers: ${tally.deletions} files deleted mid-stage; nothing of them left in the table or the bucket`,
  );
});

/** The pipeline's dependencies as the stages get them, with the storage and chunk store given. */
function depsWith(storage: FileStorage, chunks: ChunkRepository): PipelineDeps {
  return {
    files: new FileRepository(db, app.tableName),
    chunks,
    storage,
    vectors: new PackStore(storage),
    queues: stageQueues(sqs, app.config),
    usage: new UsageLedger(db, app.tableName, () => new Date()),
    config: app.config,
    clock: () => new Date(),
  };
}
const plainStorage = () => new FileStorage(s3, app.bucket);
const plainChunks = () => new ChunkRepository(db, app.tableName);

/** Uploads the PDF, asks for its ingestion (the request keeps waiting), and returns once the run has started. */
async function startIngestion() {
  const up = await uploadBytes(app, token, 'doc.pdf', pdf);
  const waiting = app.request('POST', '/message/pdf', { token, body: { url: up.downloadUrl, fileId: up.fileId } });
  const files = new FileRepository(db, app.tableName);
  let runId: string | undefined;
  while (!runId) {
    const record = await files.get(up.fileId);
    if (record?.status === 'processing') runId = record.runId;
    else await new Promise((r) => setImmediate(r)); // waiting for a condition, not for time
  }
  return { fileId: up.fileId as string, runId, waiting };
}

async function deleteFile(fileId: string) {
  tally.deletions++;
  const res = await app.request('DELETE', `/upload/${fileId}`, { token });
  expect(res.status).toBe(200);
}

/** Everything the table and the bucket still hold of a file. */
async function remains(fileId: string): Promise<string[]> {
  const items = await db.send(
    new QueryCommand({
      TableName: app.tableName,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': `FILE#${fileId}` },
    }),
  );
  const objects = await s3.send(new ListObjectsV2Command({ Bucket: app.bucket }));
  return [
    ...(items.Items ?? []).map((i) => `table: ${i.PK} ${i.SK}`),
    ...(objects.Contents ?? [])
      .map((o) => o.Key!)
      .filter((k) => k.includes(fileId))
      .map((k) => `bucket: ${k}`),
  ];
}

/** The waiting request answers 404 (or 409), in the envelope, never 500. */
function expectGone(res: TestResponse) {
  expect([404, 409]).toContain(res.status);
  expect(res.body).toMatchObject({ success: false, statusCode: res.status });
}

test('deleted while the text is extracted: the parts written after the delete are removed, and the waiting request answers 404', async () => {
  const { fileId, runId, waiting } = await startIngestion();
  await runFetch(depsWith(plainStorage(), plainChunks()), { fileId, runId });

  // The delete runs to its end right after the first part is written; extraction goes on.
  let parts = 0;
  class DeleteAfterFirstPart extends FileStorage {
    override async put(key: string, body: Uint8Array | string, contentType: string) {
      await super.put(key, body, contentType);
      if (key.includes('/part-') && ++parts === 1) await deleteFile(fileId);
    }
  }
  await runExtract(depsWith(new DeleteAfterFirstPart(s3, app.bucket), plainChunks()), {
    fileId,
    runId,
    key: sourceKey(fileId, runId),
  });
  expect(parts).toBeGreaterThan(2); // parts really were written after the delete

  expectGone(await waiting);
  expect(await remains(fileId)).toEqual([]);
  expect((await app.request('GET', `/message/pdf/${fileId}`, { token })).status).toBe(404);
});

test('deleted while a part is embedded: its chunk items and vectors are removed too', async () => {
  const { fileId, runId, waiting } = await startIngestion();
  const deps = depsWith(plainStorage(), plainChunks());
  await runFetch(deps, { fileId, runId });
  // Extract without pdf-embed running: the parts wait in the bucket (their messages in the queue).
  await runExtract(deps, { fileId, runId, key: sourceKey(fileId, runId) });
  const partsTotal = ((await new FileRepository(db, app.tableName).get(fileId)) as ProcessingFile).partsTotal!;
  expect(partsTotal).toBeGreaterThan(1);

  // The delete runs to its end just before the first part's chunk items are written.
  class DeleteBeforeChunks extends ChunkRepository {
    override async putMany(chunks: ChunkItem[]) {
      await deleteFile(fileId);
      return super.putMany(chunks);
    }
  }
  const ctx = { provider: await aiProvider(), concurrency: 2, estimateTokens };
  await runEmbed(
    depsWith(plainStorage(), new DeleteBeforeChunks(db, app.tableName)),
    { fileId, runId, part: 0, key: partKey(fileId, runId, 0) },
    ctx,
  );
  // The other parts' messages arrive after the delete: nothing is written, nothing left.
  for (let part = 1; part < partsTotal; part++)
    await runEmbed(deps, { fileId, runId, part, key: partKey(fileId, runId, part) }, ctx);

  expectGone(await waiting);
  expect(await remains(fileId)).toEqual([]);
});

test('a message of a deleted file delivered again (after a crash mid-stage) removes what the crashed attempt wrote', async () => {
  const { fileId, runId, waiting } = await startIngestion();
  const deps = depsWith(plainStorage(), plainChunks());
  await runFetch(deps, { fileId, runId });
  // The first attempt writes a part and dies (the function crashed); the file is deleted; the
  // part lands after the delete listed the bucket.
  let parts = 0;
  class CrashAfterFirstPart extends FileStorage {
    override async put(key: string, body: Uint8Array | string, contentType: string) {
      if (!key.includes('/part-') || ++parts > 1) return super.put(key, body, contentType);
      await deleteFile(fileId);
      await super.put(key, body, contentType);
      throw new Error('crash');
    }
  }
  await expect(
    runExtract(depsWith(new CrashAfterFirstPart(s3, app.bucket), plainChunks()), {
      fileId,
      runId,
      key: sourceKey(fileId, runId),
    }),
  ).rejects.toThrow('crash');
  expect((await remains(fileId)).some((r) => r.includes('/part-'))).toBe(true);
  // SQS delivers the message again.
  await runExtract(deps, { fileId, runId, key: sourceKey(fileId, runId) });

  expectGone(await waiting);
  expect(await remains(fileId)).toEqual([]);
});

test('a file being deleted cannot be ingested again', async () => {
  const up = (
    await app.request('POST', '/upload', {
      token,
      body: { fileName: 'doc.pdf', contentType: 'application/pdf', size: pdf.byteLength },
    })
  ).body.data;
  await new FileRepository(db, app.tableName).retire(up.fileId, new Date().toISOString()); // what DELETE /upload does first
  const res = await app.request('POST', '/message/pdf', {
    token,
    body: { url: up.downloadUrl, fileId: up.fileId, force: true },
  });
  expect(res.status).toBe(404);
  const record = await db.send(
    new GetCommand({ TableName: app.tableName, Key: { PK: `FILE#${up.fileId}`, SK: 'META' } }),
  );
  expect(record.Item?.status).toBe('failed');
});
