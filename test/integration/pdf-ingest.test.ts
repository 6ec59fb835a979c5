import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { fixturePdf, makeTextPdf } from '#test/helpers/make-pdf.ts';
import { messagesIn } from '#test/helpers/queues.ts';
import { until } from '#test/helpers/until.ts';
import { createAiProvider } from '#shared/ai/provider.ts';
import { createDocumentClient } from '#shared/clients.ts';
import { retrieverFor } from '#shared/retrieval/retrieve.ts';
import { createS3Client } from '#shared/s3-client.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import type { CompletedFile } from '#shared/files/file-record.ts';
import { InFlightSlots } from '#shared/limits/in-flight-slots.ts';
import { SQSClient } from '@aws-sdk/client-sqs';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '#infra/local/emulators.ts';

// Ingestion of the real fixture PDFs, served from a loopback server, through the whole service:
// POST /upload, POST /message/pdf, the SQS pipeline, GET /message/pdf/{id}, retrieval.

let app: TestApp;
let token: string;

beforeAll(async () => {
  // Most tests below read the outcome from POST /message/pdf itself (200, or 400 for a failure):
  // the longest wait the invocation allows (about 25 s), so that a loaded machine finishes within it.
  app = await startTestApp({ model: 'openai', pdfs: true, env: { PDF_SYNC_WAIT_MS: '60000' } });
  ({ token } = await app.signIn('reader@example.com'));
  for (const name of ['tracemonkey', 'hello-world', 'no-text', 'encrypted-user-password', 'truncated']) {
    app.pdfs.serve(`/${name}.pdf`, { body: await fixturePdf(`${name}.pdf`) });
  }
  app.pdfs.serve('/thirty.pdf', { body: Buffer.from(await makeTextPdf(30)) });
  // An image under a PDF's name: no document this service reads.
  app.pdfs.serve('/page.pdf', {
    body: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46]),
    contentType: 'image/jpeg',
  });
});
afterAll(() => app?.stop());

async function newFile(fileName = 'doc.pdf', size = 1000): Promise<string> {
  const res = await app.request('POST', '/upload', { token, body: { fileName, contentType: 'application/pdf', size } });
  expect(res.status).toBe(201);
  return res.body.data.fileId;
}

const ingest = (body: object, t = token) => app.request('POST', '/message/pdf', { token: t, body });

test('the text PDF completes with its 14 pages, and a known sentence is retrieved with its page', async () => {
  const fileId = await newFile('tracemonkey.pdf');
  const chat = await app.request('POST', '/chat', { token, body: { name: 'paper', type: 'file' } });
  const chatId = chat.body.data.id;

  const res = await ingest({ url: `${app.pdfs.url}/tracemonkey.pdf`, fileId, chatId });
  // 200 when it completed within the wait, else 202 and the status to poll: a loaded machine
  // may take either path for 14 pages, and the completed file must be the same.
  expect([200, 202]).toContain(res.status);
  const completed =
    res.status === 200
      ? res.body.data.embeddingsData
      : await until(
          'the paper completed',
          async () => (await app.request('GET', `/message/pdf/${fileId}`, { token })).body.data.embeddingsData,
          (data) => data.status === 'completed',
        );
  expect(completed).toMatchObject({
    fileId,
    status: 'completed',
    stage: 'done',
    pages: 14,
    model: 'text-embedding-3-small',
    dimensions: 1536,
  });
  expect(completed.chunks).toBeGreaterThan(20);
  expect(completed.tokens).toBeGreaterThan(0);

  const status = await app.request('GET', `/message/pdf/${fileId}`, { token });
  expect(status.status).toBe(200);
  expect(status.body.data.embeddingsData).toMatchObject({ status: 'completed', pages: 14, chatIds: [chatId] });

  // The attachment is a `type: file` message of the chat.
  const messages = await app.request('GET', `/chat/${chatId}/messages`, { token });
  expect(messages.body.data.some((m: any) => m.type === 'file' && m.message.includes(fileId))).toBe(true);

  // A sentence of page 9 of the paper comes back as the best passage, cited with its page.
  const retrieveSources = retrieverFor(app.config, createDocumentClient(app.config), createS3Client(app.config));
  const sentence = 'When a trace call returns, the monitor restores the interpreter state.';
  const sources = await retrieveSources({
    chatId,
    prompt: sentence,
    provider: await createAiProvider(app.config),
    k: 4,
  });
  expect(sources).toHaveLength(4);
  const best = sources[0]!;
  expect(best).toMatchObject({ fileId, fileName: 'tracemonkey.pdf', page: 9, quote: sentence });
  expect(best.text).toContain(best.quote);
  expect(best.score).toBeGreaterThan(sources[3]!.score);

  // Asked in the chat, the reply cites the page, with the passage in the model's context.
  const reply = await app.request('POST', '/message/logged-in', { token, body: { chatId, prompt: sentence } });
  expect(reply.status).toBe(200);
  expect(reply.body.data.sources[0]).toMatchObject({ fileId, page: 9, quote: sentence });
  const context = JSON.stringify(app.ai.chatRequests().at(-1)!.messages);
  expect(context).toContain(sentence);
});

test('hello-world completes with one page and one chunk', async () => {
  const fileId = await newFile('hello.pdf');
  const res = await ingest({ url: `${app.pdfs.url}/hello-world.pdf`, fileId });
  expect(res.status).toBe(200);
  expect(res.body.data.embeddingsData).toMatchObject({ status: 'completed', pages: 1, chunks: 1 });
});

test.each([
  ['no-text.pdf', 'NO_TEXT_LAYER'],
  ['encrypted-user-password.pdf', 'ENCRYPTED'],
  ['page.pdf', 'UNSUPPORTED_TYPE'],
])('%s fails with %s (400), and the status says why', async (name, reason) => {
  const fileId = await newFile(name);
  const res = await ingest({ url: `${app.pdfs.url}/${name}`, fileId });
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ success: false, statusCode: 400, errors: [{ code: reason }] });
  const status = await app.request('GET', `/message/pdf/${fileId}`, { token });
  expect(status.body.data.embeddingsData).toMatchObject({ status: 'failed', failure: { reason } });
  expect(status.body.data.embeddingsData.failure.message.length).toBeGreaterThan(10);
});

test('the truncated PDF fails cleanly (NOT_PDF), once, without retries', async () => {
  const fileId = await newFile('truncated.pdf');
  const res = await ingest({ url: `${app.pdfs.url}/truncated.pdf`, fileId });
  expect(res.status).toBe(400);
  expect(res.body.errors[0].code).toBe('NOT_PDF');
  expect(app.pdfs.responses('/truncated.pdf').filter((r) => r.method === 'GET')).toHaveLength(1);
});

test('five forced re-ingestions at once of a completed file: the last one completes, and no superseded run keeps an in-flight slot', async () => {
  // Its own user: the slots (PDF_MAX_IN_FLIGHT_PER_USER, 3) are per user.
  const { token: own, user } = await app.signIn('forcer@example.com');
  const upload = await app.request('POST', '/upload', {
    token: own,
    body: { fileName: 'thirty.pdf', contentType: 'application/pdf', size: 1000 },
  });
  const fileId = upload.body.data.fileId as string;
  const url = `${app.pdfs.url}/thirty.pdf`;
  expect((await ingest({ url, fileId }, own)).body.data.embeddingsData).toMatchObject({ status: 'completed' });

  // Five at once: two take the free slots, three wait in the queue (the first run's slot was taken
  // a moment ago); each start supersedes the one before.
  const answers = await Promise.all(Array.from({ length: 5 }, () => ingest({ url, fileId, force: true }, own)));
  expect(answers.map((a) => a.status).every((s) => s === 200 || s === 202)).toBe(true);
  const { db } = app.clients();
  const files = new FileRepository(db, app.config.TABLE_NAME);
  const done = (await until(
    'the last forced run completed',
    () => files.get(fileId),
    (r) => r?.status === 'completed' || r?.status === 'failed',
  )) as CompletedFile;
  expect(done).toMatchObject({ status: 'completed', pages: 30 });

  // Every message of the superseded runs handled (each stage saw its run was no longer current).
  const sqs = new SQSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: app.endpoints.fauxqs });
  await until(
    'the pipeline queues empty',
    async () => {
      let held = 0;
      for (const queue of Object.values(app.queues)) held += await messagesIn(sqs, queue.url);
      return held;
    },
    (n) => n === 0,
  ).finally(() => sqs.destroy());
  // No slot is held by a run other than the file's current one (that one ended: its slot is free to reclaim).
  const slots = await new InFlightSlots(db, app.config.TABLE_NAME).held({ subject: user.id, kind: 'ingestions' });
  expect(slots.map((s) => s.holder).filter((h) => h !== `${fileId}#${done.runId}`)).toEqual([]);

  // So another file is admitted at once, with no sweep: straight into the pipeline, not queued.
  const next = await app.request('POST', '/upload', {
    token: own,
    body: { fileName: 'hello.pdf', contentType: 'application/pdf', size: 1000 },
  });
  const admitted = await ingest({ url: `${app.pdfs.url}/hello-world.pdf`, fileId: next.body.data.fileId }, own);
  expect(admitted.body.data.embeddingsData).toMatchObject({ status: 'completed' });
}, 120_000);
