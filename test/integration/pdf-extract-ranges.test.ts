import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { PDFDocument } from 'pdf-lib';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '#infra/local/emulators.ts';
import { ChunkRepository, type ChunkItem } from '#shared/files/chunk-repository.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import type { CompletedFile } from '#shared/files/file-record.ts';
import { FileStorage, sourceKey } from '#shared/files/storage.ts';
import { createId } from '#shared/ids.ts';
import { loadConfig } from '#shared/config/all.ts';
import { runExtract } from '#shared/ingestion/extract-stage.ts';
import { pipelineDeps, type PipelineDeps } from '#shared/ingestion/pipeline-deps.ts';
import { resumeStuckIngestions } from '#shared/ingestion/recovery.ts';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';
import { makeScannedPdf } from '#test/helpers/make-script-pdfs.ts';
import { until } from '#test/helpers/until.ts';
import { uploadFile } from '#test/helpers/files.ts';

// A document longer than PDF_EXTRACT_PAGES_PER_RANGE is read in ranges of pages, each its own
// pdf-extract message: every page is read once, the chunks of all ranges are numbered in page
// order (0…n-1, as a document read whole), each page's text is kept for the page route, a
// scanned page in a later range still goes to OCR, and a range delivered twice counts once.

const PER_RANGE = 32;
const PAGES = 100; // ranges 1–32, 33–64, 65–96, 97–100
const SCAN_PASSAGE = 'The orchard keeper counts forty quince trees behind the mill.';

let app: TestApp;
let files: FileRepository;
let chunks: ChunkRepository;
let sqs: SQSClient;

/** A PDF of text pages with one scanned page (no text layer) at `scanAt`. */
async function textWithScan(pages: number, scanAt: number): Promise<Uint8Array> {
  const doc = await PDFDocument.load(await makeTextPdf(pages - 1, 4));
  const scan = await PDFDocument.load(await makeScannedPdf([SCAN_PASSAGE]));
  const [page] = await doc.copyPages(scan, [0]);
  doc.insertPage(scanAt - 1, page!);
  return doc.save();
}

beforeAll(async () => {
  app = await startTestApp({
    pdfs: true,
    env: { PDF_EXTRACT_PAGES_PER_RANGE: String(PER_RANGE), OCR_WORKERS: '1', PDF_SYNC_WAIT_MS: '0' },
  });
  const { db } = app.clients();
  files = new FileRepository(db, app.config.TABLE_NAME);
  chunks = new ChunkRepository(db, app.config.TABLE_NAME);
  sqs = new SQSClient({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoint: app.endpoints.fauxqs,
  });
  app.pdfs.serve('/long.pdf', { body: Buffer.from(await makeTextPdf(PAGES, 4)) });
  app.pdfs.serve('/mixed.pdf', { body: Buffer.from(await textWithScan(40, 35)) });
}, 60_000);
afterAll(async () => {
  sqs?.destroy();
  await app?.stop();
});

async function submit(token: string, path: string): Promise<string> {
  const upload = await app.request('POST', '/upload', {
    token,
    body: { fileName: path.slice(1), contentType: 'application/pdf', size: 5000 },
  });
  const fileId = upload.body.data.fileId as string;
  const res = await app.request('POST', '/message/pdf', { token, body: { url: `${app.pdfs.url}${path}`, fileId } });
  expect(res.status).toBe(202);
  return fileId;
}

const ended = (fileId: string) =>
  until(
    `file ${fileId} ended`,
    () => files.get(fileId),
    (r) => r?.status === 'completed' || r?.status === 'failed',
  );

async function storedChunks(fileId: string): Promise<ChunkItem[]> {
  const all: ChunkItem[] = [];
  for await (const items of chunks.list(fileId)) all.push(...items);
  return all.sort((a, b) => a.n - b.n);
}

const sendExtract = (body: object) =>
  sqs.send(new SendMessageCommand({ QueueUrl: app.queues['pdf-extract'].url, MessageBody: JSON.stringify(body) }));

const pageText = async (token: string, fileId: string, page: number) =>
  (await app.request('GET', `/message/pdf/${fileId}/pages/${page}`, { token })).body.data.text as string;

test('a 100-page PDF is read in 4 ranges: every page once, chunks numbered in page order, every page kept, each passage found on its page', async () => {
  const { token } = await app.signIn('ranges@example.com');
  const fileId = await submit(token, '/long.pdf');
  const file = (await ended(fileId)) as CompletedFile;
  expect(file).toMatchObject({
    status: 'completed',
    pages: PAGES,
    textPages: PAGES,
    unreadablePages: 0,
    pagesDone: PAGES,
    extractRangesTotal: 4,
    extractRangesDone: 4,
  });
  expect([...(file.doneExtractRanges ?? [])].sort()).toEqual([0, 1, 2, 3]);

  // Numbered 0…n-1 across the ranges, in page order; every page of every range in some chunk.
  const stored = await storedChunks(fileId);
  expect(stored.map((c) => c.n)).toEqual(stored.map((_, i) => i));
  expect(stored).toHaveLength(file.chunks!);
  const firstPages = stored.map((c) => c.page);
  expect(firstPages).toEqual([...firstPages].sort((a, b) => a - b));
  const covered = new Set(stored.flatMap((c) => c.pageStarts.map(([, page]) => page)));
  expect(covered.size).toBe(PAGES);

  // Page texts of each range, kept for the page route.
  for (const page of [1, 32, 33, 70, 97, 100])
    expect(await pageText(token, fileId, page)).toContain(knownSentence(page, 2));

  // A sentence from each range is found on its own page.
  for (const page of [5, 40, 77, 99]) {
    const sentence = knownSentence(page, 1);
    const res = await app.request('POST', '/search', { token, body: { query: sentence, fileIds: [fileId], k: 3 } });
    expect(res.status).toBe(200);
    expect(res.body.data[0]).toMatchObject({ fileId, page });
    expect(res.body.data[0].quote).toContain(sentence.slice(0, 20));
  }
}, 300_000);

test('a scanned page in a later range goes to OCR; its chunks are numbered after every range’s', async () => {
  const { token } = await app.signIn('ranges-mixed@example.com');
  const fileId = await submit(token, '/mixed.pdf');
  const file = (await ended(fileId)) as CompletedFile;
  expect(file).toMatchObject({ status: 'completed', pages: 40, textPages: 39, ocrPages: 1, extractRangesTotal: 2 });
  expect(await pageText(token, fileId, 35)).toMatch(/orchard keeper/i);

  const stored = await storedChunks(fileId);
  expect(stored.map((c) => c.n)).toEqual(stored.map((_, i) => i));
  const ocrChunks = stored.filter((c) => c.ocrPages?.includes(35));
  expect(ocrChunks.length).toBeGreaterThan(0);
  // OCR's chunks come after the text layers' of both ranges.
  expect(Math.min(...ocrChunks.map((c) => c.n))).toBe(file.extractChunks);
}, 300_000);

test('range messages delivered twice are counted once: the same chunks and parts as a run without them', async () => {
  const clean = (await ended(
    await submit((await app.signIn('ranges-clean@example.com')).token, '/long.pdf'),
  )) as CompletedFile;

  // Another user (extraction is reused within one user only): every range message sent again as
  // soon as the ranges are recorded, while they are being read.
  const fileId = await submit((await app.signIn('ranges-twice@example.com')).token, '/long.pdf');
  const planned = await until(
    `file ${fileId} read in ranges`,
    () => files.get(fileId),
    (r) => r?.status !== 'processing' || r.extractRangesTotal !== undefined,
  );
  expect(planned).toMatchObject({ extractRangesTotal: 4 });
  const runId = (planned as CompletedFile).runId;
  const key = `work/${fileId}/${runId}/source.pdf`;
  await Promise.all(
    [
      { fileId, runId, key },
      ...[1, 2, 3].map((index) => ({
        fileId,
        runId,
        key,
        range: { index, first: index * PER_RANGE + 1, last: Math.min((index + 1) * PER_RANGE, PAGES) },
      })),
    ].map(sendExtract),
  );
  const twice = (await ended(fileId)) as CompletedFile;
  expect(twice).toMatchObject({
    status: 'completed',
    chunks: clean.chunks,
    partsTotal: clean.partsTotal,
    partsDone: clean.partsTotal,
    extractRangesDone: 4,
    pagesDone: PAGES,
  });
  expect((await storedChunks(fileId)).map((c) => [c.n, c.page, c.text])).toEqual(
    (await storedChunks(clean.id)).map((c) => [c.n, c.page, c.text]),
  );
}, 300_000);

/** A run set up by hand at pdf-extract (as pdf-fetch leaves it), its PDF stored: what the tests below start from. */
async function runAtExtract(email: string) {
  const { token, user } = await app.signIn(email);
  const fileId = await uploadFile(app, token, 'by-hand.pdf');
  const runId = createId();
  const now = new Date().toISOString();
  await files.startRun({
    id: fileId,
    userId: user.id as string,
    runId,
    url: `${app.pdfs.url}/long.pdf`,
    force: false,
    now,
  });
  const key = sourceKey(fileId, runId);
  await new FileStorage(app.clients().s3, app.bucket).put(key, await makeTextPdf(PAGES, 4), 'application/pdf');
  await files.recordDownload(fileId, runId, { sha256: 'a'.repeat(64), size: 1 }, now);
  return { fileId, runId, key };
}

test('a first message delivered again after the other ranges were counted does not take their count back', async () => {
  // The run set up by hand at pdf-extract, its PDF stored; the ranges 1–3 arrive (and are counted)
  // before the first message, which then records the ranges: the count must still reach 4.
  const { fileId, runId, key } = await runAtExtract('ranges-order@example.com');

  await Promise.all(
    [1, 2, 3].map((index) =>
      sendExtract({
        fileId,
        runId,
        key,
        range: { index, first: index * PER_RANGE + 1, last: Math.min((index + 1) * PER_RANGE, PAGES) },
      }),
    ),
  );
  await until(
    'ranges 1–3 counted',
    () => files.get(fileId),
    (r) => r?.status === 'processing' && r.doneExtractRanges?.size === 3,
  );
  await sendExtract({ fileId, runId, key });
  expect(await ended(fileId)).toMatchObject({
    status: 'completed',
    pages: PAGES,
    extractRangesTotal: 4,
    extractRangesDone: 4,
    pagesDone: PAGES,
  });
}, 300_000);

test('ranges whose messages were lost with a killed instance are sent again when restart recovery resumes the run', async () => {
  // The first message read in this process, its range messages lost on the way (as with an
  // instance killed after reading range 0 but before its sends were delivered): range 0 counted,
  // nothing queued for ranges 1–3.
  const { fileId, runId, key } = await runAtExtract('ranges-lost@example.com');
  const deps = pipelineDeps(loadConfig(process.env), () => new Date());
  const lossy: PipelineDeps = {
    ...deps,
    queues: {
      send: (stage, bodies) => (stage === 'pdf-extract' ? Promise.resolve() : deps.queues.send(stage, bodies)),
    },
  };
  await runExtract(lossy, { fileId, runId, key });
  const stuck = await files.get(fileId);
  expect(stuck).toMatchObject({ status: 'processing', stage: 'extract', extractRangesTotal: 4, extractRangesDone: 1 });

  // What a restart does: every processing run queued again at its stage (here: pdf-extract's first message).
  expect(await resumeStuckIngestions({ files, queues: deps.queues })).toBeGreaterThanOrEqual(1);
  expect(await ended(fileId)).toMatchObject({ status: 'completed', pages: PAGES, extractRangesDone: 4 });
}, 300_000);
