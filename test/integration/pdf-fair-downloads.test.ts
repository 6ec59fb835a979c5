import { fixturePdf } from '#test/helpers/make-pdf.ts';
import { useSlowDownloadApp } from '#test/helpers/slow-download-app.ts';
import { download, MAX_REDIRECTS, type FetchPolicy } from '#shared/net/guarded-fetch.ts';
import { PermanentFailure } from '#shared/files/failures.ts';
import { until } from '#test/helpers/until.ts';

// Fair downloads: a slow-drip download is cut once it delivers less than the floor
// over a window, and one user cannot hold more than PDF_MAX_IN_FLIGHT_PER_USER ingestions, so
// another user's small PDF is never queued behind their slow URLs.

const app = useSlowDownloadApp({
  PDF_MAX_IN_FLIGHT_PER_USER: '2',
  // Without a queue an ingestion beyond the slots is refused (with one it waits:
  // test/integration/pdf-bulk-ingestion.test.ts).
  PDF_MAX_QUEUED_PER_USER: '0',
  PDF_SYNC_WAIT_MS: '10000',
  // Size checks are held open until the other ingestions are refused: on a loaded machine that
  // takes longer than the default 5 s deadline.
  PDF_PROBE_TIMEOUT_MS: '20000',
});

/**
 * The end of an ingestion POST /message/pdf answered: a 200 or 400 carries it; a 202 (the run
 * outlasted PDF_SYNC_WAIT_MS, as it may on a loaded machine) is followed until the run ends.
 */
async function ended(res: { status: number; body: any }, token: string, fileId: string) {
  expect([200, 202, 400]).toContain(res.status);
  if (res.status !== 202) return res.status === 200 ? res.body.data.embeddingsData : { status: 'failed' };
  return until(
    `file ${fileId} to leave processing`,
    async () => (await app.request('GET', `/message/pdf/${fileId}`, { token })).body.data.embeddingsData,
    (data) => data.status !== 'processing',
  );
}

async function ingest(token: string, path: string) {
  const upload = await app.request('POST', '/upload', {
    token,
    body: { fileName: 'doc.pdf', contentType: 'application/pdf', size: 1000 },
  });
  const fileId: string = upload.body.data.fileId;
  const res = await app.request('POST', '/message/pdf', { token, body: { url: `${app.pdfs.url}${path}`, fileId } });
  return Object.assign(res, { fileId });
}

test("one user's slow URLs: two in flight, the third is 429 with Retry-After; another user's small PDF completes meanwhile", async () => {
  const { token: alice } = await app.signIn('alice-slow@example.com');
  const { token: bob } = await app.signIn('bob-small@example.com');

  // PDF_SYNC_WAIT_MS passes with Alice's downloads still dripping: 202 processing.
  const first = ingest(alice, '/slow.pdf');
  const second = ingest(alice, '/slow.pdf');
  const [a1, a2] = await Promise.all([first, second]);
  expect([a1.status, a2.status]).toEqual([202, 202]);

  const a3 = await ingest(alice, '/slow.pdf');
  expect(a3.status).toBe(429);
  expect(a3.headers.get('retry-after')).toBe('10');
  expect(a3.body).toMatchObject({ success: false, statusCode: 429 });

  const b = await ingest(bob, '/small.pdf');
  expect(await ended(b, bob, b.fileId)).toMatchObject({ status: 'completed', pages: 1 });
  // Alice's two downloads were still open when Bob's PDF completed, and a third never started.
  const slow = app.pdfs.responses('/slow.pdf').filter((r) => r.method === 'GET');
  expect(slow).toHaveLength(2);
  expect(slow.every((r) => !r.aborted && r.bytesWritten < 1024 * 1024)).toBe(true);
}, 120_000); // two answers after PDF_SYNC_WAIT_MS, then a run followed to its end

test('ingestions at once while the size check is held: only PDF_MAX_IN_FLIGHT_PER_USER are admitted, the rest 429 before the URL is asked; the slots are freed when runs end', async () => {
  const { token } = await app.signIn('carol-held@example.com');
  const small = await fixturePdf('hello-world.pdf');
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  app.pdfs.serve('/held.pdf', { body: small, head: { hold: released } });
  const fileIds: string[] = [];
  for (let i = 0; i < 6; i++) {
    const upload = await app.request('POST', '/upload', {
      token,
      body: { fileName: 'doc.pdf', contentType: 'application/pdf', size: 1000 },
    });
    fileIds.push(upload.body.data.fileId);
  }
  // Six warm instances first (a URL refused at once), so the requests refused below answer while
  // the admitted ones are held well within the size check's own timeout.
  const warm = await Promise.all(
    fileIds.map((fileId) =>
      app.request('POST', '/message/pdf', { token, body: { url: 'ftp://example.com/a.pdf', fileId } }),
    ),
  );
  expect(warm.map((r) => r.status)).toEqual(Array(6).fill(400));
  const answered: number[] = [];
  const requests = fileIds.map((fileId) =>
    app.request('POST', '/message/pdf', { token, body: { url: `${app.pdfs.url}/held.pdf`, fileId } }).then((res) => {
      answered.push(res.status);
      return res;
    }),
  );
  // Every request is either held at the size check (HEAD) or already answered.
  const heads = () => app.pdfs.requests.filter((r) => r.path === '/held.pdf' && r.method === 'HEAD').length;
  await until(
    'every ingestion held at the size check or answered',
    () => heads() + answered.length,
    (n) => n === 6,
  );
  release();
  const answers = await Promise.all(requests);
  expect(heads()).toBe(2);
  const admitted = fileIds.filter((_, i) => answers[i]!.status !== 429);
  expect(admitted).toHaveLength(2);
  for (const fileId of admitted)
    expect(await ended(answers[fileIds.indexOf(fileId)]!, token, fileId)).toMatchObject({ status: 'completed' });
  const refused = answers.filter((r) => r.status === 429);
  expect(refused.map((r) => [r.status, r.headers.get('retry-after'), r.body.message])).toEqual(
    Array.from({ length: 4 }, () => [
      429,
      '10',
      'You already have 2 PDF ingestions in progress; wait for one to finish',
    ]),
  );

  // Completed runs, a failed size check and a failed run all free their slots.
  app.pdfs.serve('/missing.pdf', { status: 404 });
  // An image under a PDF's name: the run starts, then fails UNSUPPORTED_TYPE.
  app.pdfs.serve('/not-a.pdf', { body: Buffer.from('GIF89a not a document'), contentType: 'application/pdf' });
  // Files whose ingestion was refused (which ones were admitted is the race's choice).
  const [third, fourth, fifth, sixth] = fileIds.filter((_, i) => answers[i]!.status === 429);
  const ingest = (fileId: string, path: string) =>
    app.request('POST', '/message/pdf', { token, body: { url: `${app.pdfs.url}${path}`, fileId } });
  expect((await ingest(third!, '/missing.pdf')).status).toBe(400);
  await ended(await ingest(fourth!, '/not-a.pdf'), token, fourth!); // the run started, then failed
  expect((await app.request('GET', `/message/pdf/${fourth}`, { token })).body.data.embeddingsData.status).toBe(
    'failed',
  );
  const again = await Promise.all([ingest(fifth!, '/held.pdf'), ingest(sixth!, '/held.pdf')]);
  expect(again.map((r) => r.status).filter((s) => s !== 200 && s !== 202)).toEqual([]); // both admitted
  expect(await ended(again[0]!, token, fifth!)).toMatchObject({ status: 'completed' });
  expect(await ended(again[1]!, token, sixth!)).toMatchObject({ status: 'completed' });
}, 120_000); // runs followed to their end: generous for a loaded machine

describe('the download floor', () => {
  const policy = (minBytesPerSecond: number, slowWindowMs: number): FetchPolicy => ({
    allowLoopback: true,
    maxBytes: 10 * 1024 * 1024,
    timeoutMs: 60_000,
    maxRedirects: MAX_REDIRECTS,
    minBytesPerSecond,
    slowWindowMs,
  });

  test('a body slower than the floor over a window is cut: DOWNLOAD_FAILED, not retried, the connection closed', async () => {
    app.pdfs.serve('/drip.pdf', { size: 64 * 1024, drip: { bytes: 10, everyMs: 50 } });
    const err = await download(`${app.pdfs.url}/drip.pdf`, policy(1024, 500)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PermanentFailure);
    expect(err).toMatchObject({ reason: 'DOWNLOAD_FAILED', message: 'The download was too slow' });
    const [response] = app.pdfs.responses('/drip.pdf');
    await response!.finished;
    expect(response!.aborted).toBe(true);
    expect(response!.bytesWritten).toBeLessThan(64 * 1024);
  });

  test('a body that keeps above the floor completes, however many windows it takes', async () => {
    app.pdfs.serve('/steady.pdf', { size: 6000, drip: { bytes: 500, everyMs: 50 } });
    const body = await download(`${app.pdfs.url}/steady.pdf`, policy(1024, 200));
    expect(body.length).toBe(6000);
  });
});
