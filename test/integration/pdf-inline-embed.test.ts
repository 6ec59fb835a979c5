import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { useTestApp } from '#test/helpers/app.ts';
import { uploadFile } from '#test/helpers/files.ts';
import { makeTextPdf } from '#test/helpers/make-pdf.ts';
import { chunkIndexes } from '#test/helpers/chunk-items.ts';
import { until } from '#test/helpers/until.ts';

// pdf-extract embeds the first parts it makes itself (docs/DECISIONS.md "Ingestion against
// LangChain.js"): no part file, no message and no pdf-embed invocation for them. Beyond the first
// four, and for a part whose request failed, the part's file is written and pdf-embed takes it.
// S3 sits behind a recorder, so the test sees which part files were written; the embedding
// stand-in takes 4 inputs a request, so a 60-page document makes several parts.

const BATCH = 4;
const app = useTestApp(
  {
    model: 'openai',
    pdfs: true,
    recordS3: true,
    user: 'inline@example.com',
    // No retry inside the client: a failed request is the stage's to handle.
    env: { EMBEDDING_BATCH_SIZE: String(BATCH), OPENAI_MAX_RETRIES: '0' },
  },
  {
    ready: (started) => {
      started.ai.embeddingBatchLimit = BATCH;
    },
    timeout: 120_000,
  },
);
beforeEach(() => app.ai.reset());

let documents = 0;
/** A PDF never seen before (the same bytes would reuse earlier embeddings) ingested; its record once settled. */
async function ingest(pages: number) {
  const path = `/doc-${++documents}.pdf`;
  app.pdfs.serve(path, { body: await makeTextPdf(pages + documents) });
  const fileId = await uploadFile(app, app.token);
  const res = await app.request('POST', '/message/pdf', {
    token: app.token,
    body: { url: `${app.pdfs.url}${path}`, fileId },
  });
  expect([200, 202]).toContain(res.status);
  await until(
    `file ${fileId} to leave processing`,
    async () =>
      (await app.request('GET', `/message/pdf/${fileId}`, { token: app.token })).body.data.embeddingsData.status,
    (status) => status !== 'processing',
  );
  const { db } = app.clients();
  const record = (
    await db.send(new GetCommand({ TableName: app.tableName, Key: { PK: `FILE#${fileId}`, SK: 'META' } }))
  ).Item!;
  return { fileId, record };
}

/** The parts whose file was written to S3 for pdf-embed. */
const partFilesOf = (fileId: string) =>
  app.s3Requests
    .filter((r) => r.startsWith('PUT ') && r.includes(`/${fileId}/`))
    .map((r) => /\/part-(\d+)\.json/.exec(r)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);

test('a one-part document is embedded by the stage that read it: no part file, one request, completed', async () => {
  const { fileId, record } = await ingest(3);
  expect(record).toMatchObject({ status: 'completed', partsTotal: 1, partsDone: 1 });
  expect(partFilesOf(fileId)).toEqual([]);
  expect(app.ai.embeddingRequests()).toHaveLength(1);
  expect(await chunkIndexes(app.clients().db, app.tableName, fileId)).toEqual(
    Array.from({ length: record.chunks }, (_, i) => i),
  );
});

test('past the first four parts, each part goes to pdf-embed through its file; every part counted once, every chunk once', async () => {
  const { fileId, record } = await ingest(60);
  expect(record.status).toBe('completed');
  expect(record.partsTotal).toBeGreaterThan(5);
  expect(record.partsDone).toBe(record.partsTotal);
  expect(partFilesOf(fileId)).toEqual(Array.from({ length: record.partsTotal - 4 }, (_, i) => i + 4));
  expect(app.ai.embeddingRequests()).toHaveLength(record.partsTotal);
  expect(await chunkIndexes(app.clients().db, app.tableName, fileId)).toEqual(
    Array.from({ length: record.chunks }, (_, i) => i),
  );
});

test('a part whose inline request fails goes to pdf-embed, which embeds it: the file completes, its chunks once', async () => {
  app.ai.failNext(1, 503, { only: 'embeddings' });
  const { fileId, record } = await ingest(3);
  expect(record).toMatchObject({ status: 'completed', partsTotal: 1, partsDone: 1 });
  expect(partFilesOf(fileId)).toEqual([0]);
  expect(app.ai.embeddingRequests()).toHaveLength(2); // the failed one, then pdf-embed's
  expect(await chunkIndexes(app.clients().db, app.tableName, fileId)).toEqual(
    Array.from({ length: record.chunks }, (_, i) => i),
  );
});
