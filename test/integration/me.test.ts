import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '#infra/local/emulators.ts';
import type { CompletedFile, ProcessingFile } from '#shared/files/file-record.ts';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { chatCalls } from '#test/helpers/chat-calls.ts';
import { fixturePdf } from '#test/helpers/make-pdf.ts';
import { messagesIn } from '#test/helpers/queues.ts';
import { until } from '#test/helpers/until.ts';
import { uploadFile } from '#test/helpers/files.ts';
import { runAtEmbed } from '#test/helpers/runs.ts';

// GET /me through the gateway: the user as POST /auth returns them, and their usage counted where
// the work happens (replies whole and streamed, an ingested PDF, deleted files and chats, a
// completion delivered more than once), against the model's and the PDF server's stand-ins.

const BUDGET = 1_000_000;
const CHAT_MODEL = 'gpt-4o-mini';
const EMBEDDING_MODEL = 'text-embedding-3-small';

let app: TestApp;
let people = 0;

beforeAll(async () => {
  app = await startTestApp({
    model: 'openai',
    pdfs: true,
    env: {
      DAILY_TOKEN_BUDGET: String(BUDGET),
      USER_STORAGE_MAX_BYTES: '100000000',
    },
  });
  app.pdfs.serve('/hello.pdf', { body: await fixturePdf('hello-world.pdf') });
});
afterAll(() => app?.stop());

async function person() {
  const signedIn = await app.signIn(`me-${++people}@example.com`);
  return { ...signedIn, calls: chatCalls(() => ({ app, token: signedIn.token })) };
}

const me = async (token: string) => {
  const res = await app.request('GET', '/me', { token });
  expect(res.status).toBe(200);
  return res.body.data;
};
const sum = (byModel: Record<string, number>) => Object.values(byModel).reduce((a, b) => a + b, 0);

async function uploadAndIngest(token: string, size: number, chatId: string) {
  const upload = await app.request('POST', '/upload', {
    token,
    body: { fileName: 'hello.pdf', contentType: 'application/pdf', size },
  });
  expect(upload.status).toBe(201);
  const fileId = upload.body.data.fileId as string;
  const res = await app.request('POST', '/message/pdf', {
    token,
    body: { url: `${app.pdfs.url}/hello.pdf`, fileId, chatId },
  });
  expect(res.body.data.embeddingsData).toMatchObject({ status: 'completed', pages: 1 });
  return fileId;
}

test('401 without a token, in the envelope', async () => {
  const res = await app.request('GET', '/me');
  expect(res.status).toBe(401);
  expect(res.body).toMatchObject({ success: false, statusCode: 401 });
});

test('a new user: the user POST /auth returned, nothing used, the whole budget left', async () => {
  const { token, user } = await person();
  expect(await me(token)).toEqual({
    user,
    usage: {
      tokens: { today: {}, thisMonth: {} },
      budget: { dailyTokens: BUDGET, usedToday: 0, leftToday: BUDGET, creditsGranted: 0, creditsLeft: 0, left: BUDGET },
      pages: { ingested: 0, ocr: 0 },
      storage: { bytes: 0, quotaBytes: 100000000 },
      files: 0,
      chats: 0,
    },
  });
});

test('a reply and a streamed reply are counted by model, today and this month, as the budget counted them', async () => {
  const { token, calls } = await person();
  const chat = await calls.newChat();
  app.ai.setReply(() => 'A short answer.');
  const whole = await app.request('POST', '/message/logged-in', { token, body: { chatId: chat.id, prompt: 'Hello' } });
  expect(whole.status).toBe(200);
  const afterWhole = (await me(token)).usage;
  expect(afterWhole.tokens.today).toEqual({ [CHAT_MODEL]: whole.body.data.usage.totalTokens });
  expect(afterWhole.tokens.thisMonth).toEqual(afterWhole.tokens.today);
  expect(afterWhole.budget.usedToday).toBe(whole.body.data.usage.totalTokens);
  expect(afterWhole.budget.leftToday).toBe(BUDGET - afterWhole.budget.usedToday);
  expect(afterWhole.chats).toBe(1);

  const streamed = await calls.stream(chat.id, 'And again?');
  expect(streamed.status).toBe(200);
  const streamedUsage = streamed.named('usage')[0] as { totalTokens: number };
  expect(streamedUsage.totalTokens).toBeGreaterThan(0);
  // The reply is charged as its stream closes: read until the counters show it.
  const expected = afterWhole.tokens.today[CHAT_MODEL] + streamedUsage.totalTokens;
  const afterStream = (
    await until(
      'the streamed reply counted',
      () => me(token),
      (m) => m.usage.tokens.today[CHAT_MODEL] === expected,
    )
  ).usage;
  expect(afterStream.tokens.thisMonth).toEqual(afterStream.tokens.today);
  expect(sum(afterStream.tokens.thisMonth)).toBe(afterStream.budget.usedToday);
});

test('an ingested PDF counts its pages, file, bytes and embedding tokens; deleting the file and a chat uncounts them once', async () => {
  const { token, calls } = await person();
  const chat = await calls.newChat({ type: 'file' });
  const fileId = await uploadAndIngest(token, 4321, chat.id);
  const ingested = (await me(token)).usage;
  expect(ingested).toMatchObject({ pages: { ingested: 1, ocr: 0 }, files: 1, chats: 1, storage: { bytes: 4321 } });
  expect(ingested.tokens.today[EMBEDDING_MODEL]).toBeGreaterThan(0);
  expect(ingested.budget.usedToday).toBe(ingested.tokens.today[EMBEDDING_MODEL]);

  // A file chat's prompt embeds its query: the embedding model's tokens grow beside the chat model's.
  app.ai.setReply(() => 'It says hello [1].');
  const reply = await app.request('POST', '/message/logged-in', {
    token,
    body: { chatId: chat.id, prompt: 'What does it say?' },
  });
  expect(reply.status).toBe(200);
  const asked = (await me(token)).usage;
  expect(asked.tokens.today[EMBEDDING_MODEL]).toBeGreaterThan(ingested.tokens.today[EMBEDDING_MODEL]);
  expect(asked.tokens.today[CHAT_MODEL]).toBeGreaterThan(0);
  expect(sum(asked.tokens.today)).toBe(asked.budget.usedToday);
  expect(asked.chats).toBe(1);

  expect((await app.request('DELETE', `/upload/${fileId}`, { token })).status).toBe(200);
  expect((await app.request('DELETE', `/upload/${fileId}`, { token })).status).toBe(404);
  expect((await app.request('DELETE', `/chat/${chat.id}`, { token })).status).toBe(200);
  expect((await app.request('DELETE', `/chat/${chat.id}`, { token })).status).toBe(404);
  const deleted = (await me(token)).usage;
  // Pages ingested is work done: it stays.
  expect(deleted).toMatchObject({ files: 0, chats: 0, storage: { bytes: 0 }, pages: { ingested: 1 } });
});

test("a completion delivered three times counts the file's pages once", async () => {
  const { token } = await person();
  const { FileRepository } = await import('#shared/files/file-repository.ts');
  const { FileStorage, partKey, partVectorsKey } = await import('#shared/files/storage.ts');
  const { dynamo, tableName } = await import('#shared/clients.ts');
  const { s3Client } = await import('#shared/s3-client.ts');
  const files = new FileRepository(dynamo(), tableName());
  const storage = new FileStorage(s3Client(), app.bucket);
  const fileId = await uploadFile(app, token, 'run.pdf', 1000);
  // A run at its last part, started the way POST /message/pdf starts one, without queuing it.
  const url = `${app.pdfs.url}/hello.pdf`;
  const runId = await runAtEmbed(files, fileId, { url, sha256: 'y'.repeat(64), pages: 3, chunks: 2, partsTotal: 1 });
  const chunks = [0, 1].map((i) => ({
    index: i,
    text: `Sentence ${i} of the only part.`,
    page: 1,
    pageEnd: 1,
    pageStarts: [[0, 1]],
    tokens: 8,
  }));
  const key = partKey(fileId, runId, 0);
  await storage.put(key, JSON.stringify({ fileId, runId, part: 0, chunks }), 'application/json');

  const sqs = new SQSClient({ endpoint: app.endpoints.fauxqs, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS });
  try {
    const send = () =>
      sqs.send(
        new SendMessageCommand({
          QueueUrl: app.queues['pdf-embed'].url,
          MessageBody: JSON.stringify({ fileId, runId, part: 0, key }),
        }),
      );
    await Promise.all([send(), send()]); // two deliveries racing to complete
    await until(
      'the run completed',
      () => files.get(fileId),
      (r) => r?.status === 'completed',
    );
    await send(); // and one long after
    const queue = app.queues['pdf-embed'];
    await until(
      'the late delivery handled',
      async () => (await messagesIn(sqs, queue.url)) + (await messagesIn(sqs, queue.dlqUrl)),
      (left) => left === 0,
    );
  } finally {
    sqs.destroy();
  }
  const completed = (await files.get(fileId)) as CompletedFile;
  expect(completed.status).toBe('completed');
  expect((await me(token)).usage.pages).toEqual({ ingested: 3, ocr: 0 });

  // The last part's completion run again from the start, as a delivery that read the record
  // before the first completion would (its part's vectors put back): refused, nothing counted.
  const { completeRun } = await import('#shared/ingestion/completion.ts');
  const { pipelineDeps } = await import('#shared/ingestion/pipeline-deps.ts');
  await storage.put(
    partVectorsKey(fileId, runId, 0),
    await storage.get(completed.vectorsKey),
    'application/octet-stream',
  );
  const stale = { ...completed, status: 'processing', runId, partsTotal: 1, partsDone: 1, chunks: 2, pages: 3 };
  expect(
    await completeRun(
      pipelineDeps(app.config, () => new Date()),
      stale as unknown as ProcessingFile,
    ),
  ).toBe(false);
  expect((await me(token)).usage.pages).toEqual({ ingested: 3, ocr: 0 });
});
