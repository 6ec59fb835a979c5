import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import type { Behaviour } from '#test/helpers/pdf-server.ts';
import { fixturePdf, makeTextPdf } from '#test/helpers/make-pdf.ts';
import { declareUpload, uploadFile } from '#test/helpers/files.ts';
import { download, probeSize, type FetchPolicy } from '#shared/net/guarded-fetch.ts';
import { PermanentFailure, RetryableFailure } from '#shared/files/failures.ts';

// Downloading: the size probe, byte counting at the cap whatever Content-Length says, redirects
// (at most 3, each target checked again), slow servers. A 100 KB cap makes "too large" cheap,
// and a 5-page limit "too many pages".

const CAP = 100_000;
let app: TestApp;
let token: string;
let hello: Buffer;

beforeAll(async () => {
  app = await startTestApp({ pdfs: true, env: { PDF_MAX_BYTES: String(CAP), PDF_MAX_PAGES: '5' } });
  ({ token } = await app.signIn('downloader@example.com'));
  hello = await fixturePdf('hello-world.pdf');
});
afterAll(() => app?.stop());
beforeEach(() => app.pdfs.reset());

const newFile = () => uploadFile(app, token, 'x.pdf', 1000);
const ingest = async (path: string) => {
  const fileId = await newFile();
  const res = await app.request('POST', '/message/pdf', { token, body: { url: `${app.pdfs.url}${path}`, fileId } });
  return { res, fileId };
};
const status = async (fileId: string) =>
  (await app.request('GET', `/message/pdf/${fileId}`, { token })).body.data.embeddingsData;

const HUGE = 30_000_000;

test.each([
  [
    'a HEAD that lies about the size, and a chunked body',
    { head: { contentLength: 1000 }, contentLength: 'none' as const },
  ],
  ['no Content-Length at all', { contentLength: 'none' as const }],
])('a body larger than the cap with %s is cut off at the cap: TOO_LARGE', async (_, behaviour) => {
  app.pdfs.serve('/big.pdf', { size: HUGE, ...behaviour });
  const { res, fileId } = await ingest('/big.pdf');
  expect(res.status).toBe(400);
  expect(res.body.errors[0]).toMatchObject({ code: 'TOO_LARGE' });
  expect(await status(fileId)).toMatchObject({ status: 'failed', failure: { reason: 'TOO_LARGE' } });
  const gets = app.pdfs.responses('/big.pdf').filter((r) => r.method === 'GET');
  expect(gets).toHaveLength(1); // not retried: too large stays too large
  await gets[0]!.finished;
  expect(gets[0]!.aborted).toBe(true); // the client hung up...
  expect(gets[0]!.bytesWritten).toBeLessThan(HUGE / 2); // ...long before the end
});

test('a HEAD that lies, then a GET announcing the real size, is refused on the GET headers', async () => {
  app.pdfs.serve('/big.pdf', { size: HUGE, head: { contentLength: 1000 } });
  const { res } = await ingest('/big.pdf');
  expect(res.status).toBe(400);
  expect(res.body.errors[0]).toMatchObject({ code: 'TOO_LARGE' });
  const [get] = app.pdfs.responses('/big.pdf').filter((r) => r.method === 'GET');
  await get!.finished;
  expect(get!.bytesWritten).toBeLessThan(HUGE / 2);
});

test('an honest Content-Length above the cap is refused by the size probe, before any download', async () => {
  app.pdfs.serve('/honest.pdf', { size: CAP + 1 });
  const { res, fileId } = await ingest('/honest.pdf');
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ statusCode: 400, errors: [{ path: 'body.url', code: 'TOO_LARGE' }] });
  expect(app.pdfs.requests.map((r) => r.method)).toEqual(['HEAD']);
  expect(await status(fileId)).toMatchObject({ status: 'uploaded' });
});

test('a URL whose size check fails (404) is a 400 at once', async () => {
  app.pdfs.serve('/gone.pdf', { status: 404 });
  const { res } = await ingest('/gone.pdf');
  expect(res.status).toBe(400);
  // What the server answered over HTTP is said; how a connection failed is not (test/security/download-oracle.test.ts).
  expect(res.body.message).toBe('The PDF could not be downloaded from the URL: the server answered 404 Not Found');
  expect(res.body.errors[0].code).toBe('DOWNLOAD_FAILED');
});

test('a server refusing HEAD is probed with a one-byte ranged GET', async () => {
  app.pdfs.serve('/nohead.pdf', { body: hello, head: { status: 405 } });
  const { res } = await ingest('/nohead.pdf');
  expect(res.status).toBe(200);
  expect(app.pdfs.requests.some((r) => r.method === 'GET' && r.headers.range === 'bytes=0-0')).toBe(true);
});

test('three redirects are followed; a fourth fails', async () => {
  app.pdfs.serve('/final.pdf', { body: hello });
  app.pdfs.redirect('/r1', '/r2');
  app.pdfs.redirect('/r2', `${app.pdfs.url}/r3`, 301);
  app.pdfs.redirect('/r3', '/final.pdf', 307);
  const ok = await ingest('/r1');
  expect(ok.res.status).toBe(200);
  expect(ok.res.body.data.embeddingsData).toMatchObject({ status: 'completed', pages: 1 });

  app.pdfs.redirect('/r0', '/r1');
  const tooMany = await ingest('/r0');
  expect(tooMany.res.status).toBe(400);
  expect(tooMany.res.body.errors[0]).toMatchObject({
    code: 'DOWNLOAD_FAILED',
    message: expect.stringMatching(
      /^The PDF could not be downloaded from the URL: its redirects could not be followed/,
    ),
  });
});

test('a download that keeps failing (500) fails the file with DOWNLOAD_FAILED after its retries', async () => {
  app.pdfs.serve('/flaky.pdf', { body: hello, status: 500, head: { status: 200 } });
  const { res, fileId } = await ingest('/flaky.pdf');
  // The URL's server failed, not this service: a 400, not a 500 that would trip the 5xx alarm.
  expect(res.status).toBe(400);
  expect(res.body.errors[0].code).toBe('DOWNLOAD_FAILED');
  expect(await status(fileId)).toMatchObject({
    status: 'failed',
    failure: {
      reason: 'DOWNLOAD_FAILED',
      cause: 'HTTP_STATUS',
      httpStatus: 500,
      message: 'The PDF could not be downloaded from the URL: the server answered 500 Internal Server Error',
    },
  });
  expect(app.pdfs.responses('/flaky.pdf').filter((r) => r.method === 'GET')).toHaveLength(5); // maxReceiveCount of pdf-fetch
});

// The size check passed (HEAD 200), then the user's own server failed the download: a typed 400
// naming what it answered, never a 500 (the service did nothing wrong).
test.each<[string, Behaviour, { cause: string; httpStatus?: number; message: string }, number]>([
  ['GET 404', { status: 404 }, { cause: 'HTTP_STATUS', httpStatus: 404, message: 'answered 404 Not Found' }, 1],
  ['GET 410', { status: 410 }, { cause: 'HTTP_STATUS', httpStatus: 410, message: 'answered 410 Gone' }, 1],
  ['GET 403', { status: 403 }, { cause: 'HTTP_STATUS', httpStatus: 403, message: 'answered 403 Forbidden' }, 1],
  [
    'GET 503 on every attempt',
    { status: 503 },
    { cause: 'HTTP_STATUS', httpStatus: 503, message: 'answered 503 Service Unavailable' },
    5,
  ],
  [
    'a body shorter than its Content-Length (the connection cut)',
    { cutAfter: 200 },
    { cause: 'INTERRUPTED', message: 'cut the download short' },
    5,
  ],
])('HEAD 200, then %s: 400 DOWNLOAD_FAILED and the file failed with its cause', async (_, behaviour, failure, gets) => {
  app.pdfs.serve('/users.pdf', { body: hello, head: { status: 200 }, ...behaviour });
  const { res, fileId } = await ingest('/users.pdf');
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ success: false, statusCode: 400, errors: [{ code: 'DOWNLOAD_FAILED' }] });
  expect(res.body.message).toContain(failure.message);
  const { message, ...cause } = failure;
  expect(await status(fileId)).toMatchObject({
    status: 'failed',
    failure: { reason: 'DOWNLOAD_FAILED', ...cause, message: expect.stringContaining(message) },
  });
  expect(app.pdfs.responses('/users.pdf').filter((r) => r.method === 'GET')).toHaveLength(gets);
});

test('a PDF with more pages than PDF_MAX_PAGES fails TOO_MANY_PAGES', async () => {
  app.pdfs.serve('/six.pdf', { body: await makeTextPdf(6, 2) });
  const { res, fileId } = await ingest('/six.pdf');
  expect(res.status).toBe(400);
  expect(res.body.errors[0]).toMatchObject({ code: 'TOO_MANY_PAGES' });
  expect((await status(fileId)).failure.message).toMatch(/6 pages; at most 5/);
});

describe('the guarded download itself', () => {
  const policy = (o: Partial<FetchPolicy> = {}): FetchPolicy => ({
    allowLoopback: true,
    maxBytes: CAP,
    timeoutMs: 60_000, // generous: a loaded machine must not reach it where a test expects an answer
    maxRedirects: 3,
    ...o,
  });

  test('a slow drip is stopped by the deadline', async () => {
    // The body stops after its first bytes until the test says: only the deadline can end the
    // download. The deadline is long enough for the answer's head to arrive on a loaded machine
    // (a shorter one can strike before it: "No answer within …", another failure).
    const body = Buffer.alloc(50_000, 0x25);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    app.pdfs.serve('/drip.pdf', {
      body,
      drip: { bytes: 100, everyMs: 20 },
      holdAfter: { bytes: 1000, until: released },
    });
    try {
      const err = await download(`${app.pdfs.url}/drip.pdf`, policy({ timeoutMs: 10_000 })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RetryableFailure);
      expect((err as Error).message).toBe('The download took longer than 10000 ms');
      // Stopped, not waited out: the client hung up while the server still had the rest to send.
      const [get] = app.pdfs.responses('/drip.pdf').filter((r) => r.method === 'GET');
      await get!.finished;
      expect(get!.aborted).toBe(true);
      expect(get!.bytesWritten).toBe(1000);
    } finally {
      release();
    }
  });

  test('a redirect to a private or metadata address is refused without connecting', async () => {
    for (const target of [
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/a.pdf',
      'http://[fd00:ec2::254]/',
      'http://private.test/a.pdf',
    ]) {
      app.pdfs.redirect('/hop', target);
      const err = await download(
        `${app.pdfs.url}/hop`,
        policy({
          resolve: async (host) =>
            host === 'private.test' ? [{ address: '192.168.0.7', family: 4 }] : [{ address: '127.0.0.1', family: 4 }],
        }),
      ).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PermanentFailure);
      expect((err as Error).message).toMatch(/metadata|private|unique-local/);
    }
  });

  test('the probe reports the announced size', async () => {
    app.pdfs.serve('/a.pdf', { body: hello });
    await expect(probeSize(`${app.pdfs.url}/a.pdf`, policy())).resolves.toBe(hello.length);
    app.pdfs.serve('/b.pdf', { body: hello, contentLength: 'none' });
    await expect(probeSize(`${app.pdfs.url}/b.pdf`, policy())).resolves.toBeUndefined();
  });
});

test('the file’s own downloadUrl before anything was PUT to its uploadUrl: a 400 that says to upload first', async () => {
  const { fileId, downloadUrl } = await declareUpload(app, token, 'never-sent.pdf', 2000);
  const res = await app.request('POST', '/message/pdf', { token, body: { url: downloadUrl, fileId } });
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({
    success: false,
    statusCode: 400,
    message: expect.stringMatching(/^Nothing has been uploaded for this file yet: PUT the document to the uploadUrl/),
    errors: [{ path: 'body.url', code: 'NOT_UPLOADED' }],
  });
  // Nothing was started: the file is still only uploaded.
  expect((await app.request('GET', `/message/pdf/${fileId}`, { token })).body.data.embeddingsData.status).toBe(
    'uploaded',
  );
});
