import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { pipelineStages } from '#infra/routes.ts';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '#infra/local/emulators.ts';
import { lambdaContext } from '#infra/local/lambda-runtime.ts';
import { loadFunction } from '#infra/local/runtime.ts';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import type { Behaviour } from '#test/helpers/pdf-server.ts';
import { fixturePdf } from '#test/helpers/make-pdf.ts';
import { sqsRecord } from '#test/helpers/queues.ts';

// pdf-fetch on its last attempt when the user's own server is what failed (a 503 every time, a
// body cut short): the file fails with that typed reason and the message is consumed, not
// reported: a message reported on its last receive goes to the DLQ, whose alarm is for this
// service's own failures. The run is started with no pollers, its message taken from the queue
// and handed to the function as Lambda would on its fifth receive.

let app: TestApp;
let sqs: SQSClient;
let token: string;
let hello: Buffer;
const LAST = String(pipelineStages['pdf-fetch'].maxReceiveCount);

beforeAll(async () => {
  app = await startTestApp({ pdfs: true, pollers: false, env: { PDF_SYNC_WAIT_MS: '0' } });
  sqs = new SQSClient({ endpoint: app.endpoints.fauxqs, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  ({ token } = await app.signIn('last-attempt@example.com'));
  hello = await fixturePdf('hello-world.pdf');
});
afterAll(async () => {
  sqs?.destroy();
  await app?.stop();
});

type FetchHandler = (e: SQSEvent, c: unknown) => Promise<{ batchItemFailures: { itemIdentifier: string }[] }>;

/** A run started for `path`, its pdf-fetch message as the function receives it the last time. */
async function lastDelivery(path: string): Promise<{ fileId: string; record: SQSRecord }> {
  const upload = await app.request('POST', '/upload', {
    token,
    body: { fileName: 'x.pdf', contentType: 'application/pdf', size: 1000 },
  });
  const fileId = upload.body.data.fileId as string;
  const started = await app.request('POST', '/message/pdf', { token, body: { url: `${app.pdfs.url}${path}`, fileId } });
  expect(started.status).toBe(202);
  const got = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: app.queues['pdf-fetch'].url, MaxNumberOfMessages: 1, WaitTimeSeconds: 5 }),
  );
  const message = got.Messages![0]!;
  expect(JSON.parse(message.Body!).fileId).toBe(fileId);
  const record = sqsRecord(
    app.queues['pdf-fetch'].arn,
    { messageId: message.MessageId!, receiptHandle: message.ReceiptHandle!, body: message.Body! },
    LAST,
  );
  return { fileId, record };
}

test.each<[string, Behaviour, string]>([
  ['a 503', { status: 503 }, 'HTTP_STATUS'],
  ['a body cut short', { cutAfter: 200 }, 'INTERRUPTED'],
])(
  'the URL’s server answering %s on the last attempt: the file fails, the message is consumed',
  async (_, behaviour, cause) => {
    const path = `/last-${cause}.pdf`;
    app.pdfs.serve(path, { body: hello, head: { status: 200 }, ...behaviour });
    const { fileId, record } = await lastDelivery(path);
    const handler = (await loadFunction('functions/pdf-fetch.ts')) as FetchHandler;
    const result = await handler({ Records: [record] }, lambdaContext('pdf-fetch', 60_000));
    expect(result.batchItemFailures).toEqual([]);
    const status = (await app.request('GET', `/message/pdf/${fileId}`, { token })).body.data.embeddingsData;
    expect(status).toMatchObject({ status: 'failed', failure: { reason: 'DOWNLOAD_FAILED', cause } });
  },
);
