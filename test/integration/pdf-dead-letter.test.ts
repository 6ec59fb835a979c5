import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createId } from '#shared/ids.ts';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '#infra/local/emulators.ts';
import { startPoller, type Poller } from '#infra/local/poller.ts';
import { pipelineStages } from '#infra/routes.ts';

// No file stays `processing`: a stage that dies on every attempt — no code of it runs
// to record anything — has its message moved to the DLQ by the queue's redrive policy, and the
// dead-letter consumer (run by the local runtime from the manifest, as the stack wires it) marks
// the file failed with PROCESSING_FAILED and the stage. Run ids fence stale messages.

let app: TestApp;
let sqs: SQSClient;
let token: string;
let files: import('#shared/files/file-repository.ts').FileRepository;
type FailedFile = import('#shared/files/file-record.ts').FailedFile;
let recordDeadLetter: typeof import('#shared/ingestion/dead-letter.ts').recordDeadLetter;

beforeAll(async () => {
  app = await startTestApp();
  sqs = new SQSClient({ endpoint: app.endpoints.fauxqs, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  ({ token } = await app.signIn('dead-letters@example.com'));
  const { dynamo, tableName } = await import('#shared/clients.ts');
  const { FileRepository } = await import('#shared/files/file-repository.ts');
  files = new FileRepository(dynamo(), tableName());
  ({ recordDeadLetter } = await import('#shared/ingestion/dead-letter.ts'));
});
afterAll(async () => {
  sqs?.destroy();
  await app?.stop();
});

/** A file in the middle of a run, at the given stage, as the pipeline would leave it. */
async function fileAt(stage: 'fetch' | 'extract') {
  const upload = await app.request('POST', '/upload', {
    token,
    body: { fileName: 'doc.pdf', contentType: 'application/pdf', size: 1000 },
  });
  const fileId = upload.body.data.fileId as string;
  const record = (await files.get(fileId))!;
  const runId = createId();
  await files.startRun({
    id: fileId,
    userId: record.userId,
    runId,
    url: 'http://127.0.0.1:9/doc.pdf',
    force: false,
    now: new Date().toISOString(),
  });
  if (stage === 'extract')
    await files.recordDownload(fileId, runId, { sha256: 'a'.repeat(64), size: 1 }, new Date().toISOString());
  return { fileId, runId };
}

async function statusWhenFinished(fileId: string) {
  for (;;) {
    const res = await app.request('GET', `/message/pdf/${fileId}`, { token });
    if (res.body.data.embeddingsData.status !== 'processing') return res.body.data.embeddingsData;
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('pdf-extract dying on every attempt: the message reaches the DLQ and the file ends failed, naming the stage', async () => {
  const { fileId, runId } = await fileAt('extract');
  let attempts = 0;
  // A queue redriving to pdf-extract's DLQ after as many receives as the real one, read by a
  // pdf-extract whose process dies every time: the runtime reports the invocation failed and no
  // stage code runs. (The runtime's own pdf-extract poller would run the real stage.)
  const dying = await sqs.send(
    new CreateQueueCommand({
      QueueName: `dying-extract-${createId()}`,
      Attributes: {
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: app.queues['pdf-extract'].dlqArn,
          maxReceiveCount: String(pipelineStages['pdf-extract'].maxReceiveCount),
        }),
      },
    }),
  );
  const pollers: Poller[] = [
    startPoller({
      name: 'pdf-extract',
      sqs,
      queueUrl: dying.QueueUrl!,
      queueArn: 'arn:aws:sqs:us-east-1:000000000000:dying-extract',
      batchSize: 1,
      concurrency: 1,
      timeoutSeconds: 5,
      memoryMb: 1536,
      retryDelaySeconds: 0,
      loadHandler: async () => async () => {
        attempts++;
        throw new Error('Runtime exited with error: signal: killed');
      },
    }),
  ];
  try {
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: dying.QueueUrl,
        MessageBody: JSON.stringify({ fileId, runId, key: `work/${fileId}/${runId}/source.pdf` }),
      }),
    );
    const final = await statusWhenFinished(fileId);
    expect(final).toMatchObject({
      status: 'failed',
      failure: {
        reason: 'PROCESSING_FAILED',
        stage: 'pdf-extract',
        message: 'Processing failed in pdf-extract: the stage stopped on every attempt',
      },
    });
    expect(attempts).toBe(pipelineStages['pdf-extract'].maxReceiveCount);
  } finally {
    await Promise.all(pollers.map((p) => p.stop()));
  }
});

test('the consumer fences: another run, a finished file, or a stage the run has passed change nothing', async () => {
  const { fileId, runId } = await fileAt('extract');
  // Another run's message, and a fetch message of this run (it is past fetch): both stale.
  expect(
    await recordDeadLetter({ files, clock: () => new Date() }, JSON.stringify({ fileId, runId: createId() })),
  ).toBe(false);
  expect(await recordDeadLetter({ files, clock: () => new Date() }, JSON.stringify({ fileId, runId }))).toBe(false);
  expect(await recordDeadLetter({ files, clock: () => new Date() }, 'not json')).toBe(false);
  expect((await files.get(fileId))!.status).toBe('processing');
  // An embed part of this run dies while extraction still goes on: that run can never complete.
  const part = JSON.stringify({ fileId, runId, part: 0, key: `work/${fileId}/${runId}/part-0.json` });
  expect(await recordDeadLetter({ files, clock: () => new Date() }, part)).toBe(true);
  expect(((await files.get(fileId)) as FailedFile).failure).toMatchObject({
    reason: 'PROCESSING_FAILED',
    stage: 'pdf-embed',
  });
  // The same message again (SQS delivers at least once): the file is no longer processing.
  expect(await recordDeadLetter({ files, clock: () => new Date() }, part)).toBe(false);
});

test("a message in pdf-fetch's DLQ fails its file too: the runtime consumes every stage's DLQ", async () => {
  const { fileId, runId } = await fileAt('fetch');
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: app.queues['pdf-fetch'].dlqUrl,
      MessageBody: JSON.stringify({ fileId, runId }),
    }),
  );
  expect(await statusWhenFinished(fileId)).toMatchObject({
    status: 'failed',
    failure: { reason: 'PROCESSING_FAILED', stage: 'pdf-fetch' },
  });
});
