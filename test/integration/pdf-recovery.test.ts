import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { startLocalRuntime, type LocalRuntime, type LocalRuntimeOptions } from '#infra/local/runtime.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '#infra/local/emulators.ts';
import { signLocalIdToken } from '#infra/local/local-idp.ts';
import { startPdfServer, type PdfServer } from '#test/helpers/pdf-server.ts';
import { fixturePdf } from '#test/helpers/make-pdf.ts';
import { until } from '#test/helpers/until.ts';
import { runAtEmbed } from '#test/helpers/runs.ts';

// A restart in the middle of an ingestion: fauxqs keeps queues in memory, so the queued messages
// are lost while the records on disk still say processing. The next start queues each run again
// at its stage, and it completes.

let dataDir: string;
let pdfs: PdfServer;
let runtime: LocalRuntime | undefined;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'recovery-test-'));
  pdfs = await startPdfServer();
  pdfs.serve('/hello.pdf', { body: await fixturePdf('hello-world.pdf') });
});
afterAll(async () => {
  await runtime?.stop();
  await pdfs?.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function call(base: string, method: string, path: string, token: string, body?: object) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body && { 'content-type': 'application/json' }) },
    ...(body && { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

test('runs cut short by a restart are queued again on start and complete', async () => {
  const options: LocalRuntimeOptions = {
    port: 0,
    dataDir,
    persist: false,
    emulators: {
      dynamodbEndpoint: process.env.TEST_DYNAMODB_ENDPOINT!,
      fauxqsEndpoint: process.env.TEST_FAUXQS_ENDPOINT!,
    },
    resourcePrefix: `t${randomBytes(4).toString('hex')}-`,
    log: false,
    retryDelaySeconds: 0,
    env: { LOG_LEVEL: 'SILENT', PDF_SYNC_WAIT_MS: '0' },
  };
  // Before the restart: no pollers, so the runs wait in the queue.
  const first = await startLocalRuntime({ ...options, pollers: false });
  const idToken = await signLocalIdToken(dataDir, { email: 'restart@example.com' });
  const signIn = await fetch(`${first.url}/auth`, { method: 'POST', headers: { authorization: `Bearer ${idToken}` } });
  const token = ((await signIn.json()) as any).data.token as string;
  const upload = async () =>
    (
      await call(first.url, 'POST', '/upload', token, {
        fileName: 'hello.pdf',
        contentType: 'application/pdf',
        size: 743,
      })
    ).body.data.fileId as string;

  // One run stuck at fetch (its message will be lost)...
  const atFetch = await upload();
  const started = await call(first.url, 'POST', '/message/pdf', token, {
    url: `${pdfs.url}/hello.pdf`,
    fileId: atFetch,
  });
  expect(started.status).toBe(202);
  expect(started.body.data.embeddingsData).toMatchObject({ status: 'processing', stage: 'fetch' });

  // ...and one stuck at embed, its part written but never embedded.
  const atEmbed = await upload();
  const { FileRepository } = await import('#shared/files/file-repository.ts');
  const { FileStorage, partKey } = await import('#shared/files/storage.ts');
  const { dynamo, tableName } = await import('#shared/clients.ts');
  const { s3Client } = await import('#shared/s3-client.ts');
  const files = new FileRepository(dynamo(), tableName());
  const helloUrl = `${pdfs.url}/hello.pdf`;
  const runId = await runAtEmbed(files, atEmbed, {
    url: helloUrl,
    sha256: 'a'.repeat(64),
    pages: 1,
    chunks: 1,
    partsTotal: 1,
  });
  const chunk = { index: 0, text: 'Hello world.', page: 1, pageEnd: 1, pageStarts: [[0, 1]], tokens: 3 };
  await new FileStorage(s3Client(), first.bucket).put(
    partKey(atEmbed, runId, 0),
    JSON.stringify({ fileId: atEmbed, runId, part: 0, chunks: [chunk] }),
    'application/json',
  );

  await first.stop();
  // fauxqs forgets its queues on a restart: drop what the first runtime queued.
  const sqs = new SQSClient({ endpoint: first.endpoints.fauxqs, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  const lost = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: first.queues['pdf-fetch'].url, MaxNumberOfMessages: 10 }),
  );
  expect(lost.Messages).toHaveLength(1);
  await sqs.send(
    new DeleteMessageCommand({
      QueueUrl: first.queues['pdf-fetch'].url,
      ReceiptHandle: lost.Messages![0]!.ReceiptHandle!,
    }),
  );
  sqs.destroy();

  runtime = await startLocalRuntime({ ...options, pollers: true });
  const { url } = runtime;
  for (const fileId of [atFetch, atEmbed]) {
    const data = await until(
      `file ${fileId} to leave processing`,
      async () => (await call(url, 'GET', `/message/pdf/${fileId}`, token)).body.data.embeddingsData,
      (d: any) => d.status !== 'processing',
    );
    expect(data).toMatchObject({ status: 'completed', pages: 1, chunks: 1 });
  }
  expect(pdfs.count('/hello.pdf')).toBeGreaterThanOrEqual(2); // HEAD before the restart, GET after
}, 180_000); // two starts of the runtime and two ingestions: a loaded machine needs more than the default minute
