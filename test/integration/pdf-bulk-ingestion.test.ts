import { fixturePdf } from '#test/helpers/make-pdf.ts';
import { useSlowDownloadApp } from '#test/helpers/slow-download-app.ts';
import { until } from '#test/helpers/until.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import type { CompletedFile } from '#shared/files/file-record.ts';
import { ChunkRepository } from '#shared/files/chunk-repository.ts';

// Fair bulk ingestion: a burst of PDFs from one user is accepted whole (no 429 below
// PDF_MAX_QUEUED_PER_USER, with the upload and ingestion rate limits on) and processed a few at a
// time from the user's queue, while another user's PDF goes straight into the pipeline; a queued
// file that is deleted is never fetched.

const BURST = 100;
const IN_FLIGHT = 2;

let files: FileRepository;

const app = useSlowDownloadApp(
  {
    PDF_MAX_IN_FLIGHT_PER_USER: String(IN_FLIGHT),
    PDF_MAX_QUEUED_PER_USER: String(BURST),
    // The abuse limits stay on: the burst must pass them.
    RATE_LIMIT_INGESTIONS_PER_MINUTE: '10',
    RATE_LIMIT_UPLOADS_PER_MINUTE: '20',
    PDF_SYNC_WAIT_MS: '0',
  },
  async (app) => {
    files = new FileRepository(app.clients().db, app.config.TABLE_NAME);
    const small = await fixturePdf('hello-world.pdf');
    for (const path of ['/bob.pdf', '/queued-then-deleted.pdf', '/after.pdf']) app.pdfs.serve(path, { body: small });
  },
);

async function upload(token: string) {
  return app.request('POST', '/upload', {
    token,
    body: { fileName: 'doc.pdf', contentType: 'application/pdf', size: 1000 },
  });
}

const ingest = (token: string, fileId: string, path: string) =>
  app.request('POST', '/message/pdf', { token, body: { url: `${app.pdfs.url}${path}`, fileId } });

const records = async (ids: string[]) =>
  (await files.getMany(ids)).filter((r): r is CompletedFile => r.status === 'completed');

/** Waits for every file to complete, failing only when a whole minute passes without one more. */
async function allCompleted(ids: string[]): Promise<CompletedFile[]> {
  let done = await records(ids);
  while (done.length < ids.length) {
    const before = done.length;
    done = await until(
      `one more of ${ids.length} files completed (${before} so far)`,
      () => records(ids),
      (r) => r.length > before,
    );
  }
  return done;
}

test(`${BURST} PDFs at once from one user are all accepted and completed in turn; another user's PDF sent after them completes before most of them`, async () => {
  const { token: alice } = await app.signIn('alice-bulk@example.com');
  const { token: bob } = await app.signIn('bob-single@example.com');

  const uploads = await Promise.all(Array.from({ length: BURST }, () => upload(alice)));
  expect(uploads.map((r) => r.status)).toEqual(uploads.map(() => 201));
  const ids = uploads.map((r) => r.body.data.fileId as string);
  const answers = await Promise.all(ids.map((id) => ingest(alice, id, '/small.pdf')));
  expect(answers.map((r) => r.status).filter((s) => s !== 202 && s !== 200)).toEqual([]);

  // Most of the burst waits in Alice's queue, and says so with its place.
  const waiting = answers.filter((r) => r.body.data.embeddingsData.queued);
  expect(waiting.length).toBeGreaterThan(BURST / 2);
  const last = waiting.at(-1)!.body.data.embeddingsData.fileId;
  const status = await app.request('GET', `/message/pdf/${last}`, { token: alice });
  expect(status.body.data.embeddingsData).toMatchObject({
    status: 'processing',
    progress: { stage: 'queued' },
    queued: { place: expect.any(Number) },
  });

  // Bob's single PDF, sent once the whole burst is accepted, does not wait behind it.
  const bobUpload = await upload(bob);
  const bobId = bobUpload.body.data.fileId as string;
  const bobAnswer = await ingest(bob, bobId, '/bob.pdf');
  expect(bobAnswer.status).toBe(202);
  expect(bobAnswer.body.data.embeddingsData.queued).toBeUndefined();
  const [bobDone] = await allCompleted([bobId]);

  const aliceDone = await allCompleted(ids);
  const completedAfterBob = aliceDone.filter((r) => r.completedAt > bobDone!.completedAt);
  expect(completedAfterBob.length).toBeGreaterThan(BURST / 2);
  // Never more than IN_FLIGHT of Alice's runs were in the pipeline: each fetch started after the
  // fetch IN_FLIGHT places before it had completed (runs start in fetch order of their release).
  const started = aliceDone.map((r) => r.fetchedAt!).sort();
  const completed = aliceDone.map((r) => r.completedAt).sort();
  for (let i = IN_FLIGHT; i < started.length; i++) expect(started[i]! >= completed[i - IN_FLIGHT]!).toBe(true);
}, 900_000);

test('a queued file that is deleted is never fetched or chunked; the queue moves on past it', async () => {
  const { token } = await app.signIn('carol-cancel@example.com');
  const [slow1, slow2, cancelled, after] = await Promise.all([
    upload(token),
    upload(token),
    upload(token),
    upload(token),
  ]);
  const id = (r: typeof slow1) => r.body.data.fileId as string;
  // Two slow downloads hold both slots.
  for (const r of [slow1, slow2]) expect((await ingest(token, id(r), '/slow.pdf')).status).toBe(202);
  const queued = await ingest(token, id(cancelled), '/queued-then-deleted.pdf');
  expect(queued.body.data.embeddingsData.queued).toMatchObject({ place: 1 });
  expect((await ingest(token, id(after), '/after.pdf')).body.data.embeddingsData.queued).toMatchObject({ place: 2 });

  expect((await app.request('DELETE', `/upload/${id(cancelled)}`, { token })).status).toBe(200);
  // Freeing a slot releases the queue: the deleted file's entry is first, and is skipped.
  expect((await app.request('DELETE', `/upload/${id(slow1)}`, { token })).status).toBe(200);
  await allCompleted([id(after)]);

  expect((await app.request('GET', `/message/pdf/${id(cancelled)}`, { token })).status).toBe(404);
  expect(app.pdfs.responses('/queued-then-deleted.pdf').filter((r) => r.method === 'GET')).toHaveLength(0);
  const chunks = new ChunkRepository(app.clients().db, app.config.TABLE_NAME);
  const stored = [];
  for await (const page of chunks.list(id(cancelled))) stored.push(...page);
  expect(stored).toEqual([]);
  expect(await files.get(id(cancelled))).toBeUndefined();
});
