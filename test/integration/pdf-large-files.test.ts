import { createHash } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { largePdf, largePdfPages } from '#test/helpers/large-pdf.ts';
import { until } from '#test/helpers/until.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import { PART_BYTES } from '#shared/files/multipart-sink.ts';
import { FileStorage } from '#shared/files/storage.ts';
import { localCopy } from '#shared/ingestion/local-copy.ts';
import { extractTextBounded } from '#shared/pdf/bounded-extract.ts';
import { extractLimits } from '#shared/ingestion/extract-stage.ts';

// Large PDFs (docs/DECISIONS.md, Large PDFs: nothing holds the whole file). pdf-fetch streams a
// download into the bucket: the multipart upload's parts are written while the body is still
// arriving, and the file's SHA-256 and size are those of the whole body (the S3 requests are
// watched through a loopback pass-through in front of the local S3; the PDF server pauses the body
// after three parts' worth, and releases it only once parts have reached the bucket). pdf-extract
// copies the stored PDF to a temporary file of its own, which the pdf.js child reads in ranges.

let app: TestApp;
let token: string;
let files: FileRepository;

beforeAll(async () => {
  app = await startTestApp({
    model: 'openai',
    pdfs: true,
    recordS3: true,
    env: {
      PDF_MAX_BYTES: String(64 * 1024 * 1024),
      PDF_SYNC_WAIT_MS: '0',
    },
  });
  files = new FileRepository(app.clients().db, app.config.TABLE_NAME);
  ({ token } = await app.signIn('large-download@example.com'));
});
afterAll(() => app?.stop());

test('a PDF of several parts is stored part by part as it downloads; its SHA-256 and size are the whole body’s', async () => {
  const shape = { bytes: 5 * PART_BYTES, imageBytesPerPage: 2 * 1024 * 1024 };
  const chunks: Buffer[] = [];
  for await (const chunk of largePdf(shape)) chunks.push(chunk);
  const pdf = Buffer.concat(chunks);
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  app.pdfs.serve('/large.pdf', { body: pdf, holdAfter: { bytes: 3 * PART_BYTES + 1024 * 1024, until: released } });

  const created = await app.request('POST', '/upload', {
    token,
    body: { fileName: 'large.pdf', contentType: 'application/pdf', size: pdf.byteLength },
  });
  const fileId: string = created.body.data.fileId;
  const ingest = await app.request('POST', '/message/pdf', {
    token,
    body: { url: `${app.pdfs.url}/large.pdf`, fileId },
  });
  expect([200, 202]).toContain(ingest.status);

  // Three parts' worth sent, the rest held back: parts must reach the bucket before the body ends.
  const partPuts = () => app.s3Requests.filter((r) => /^PUT [^?]*\/source\.pdf\?.*partNumber=/.test(r));
  await until('parts of the download stored while its body is paused', partPuts, (puts) => puts.length >= 2);
  release();

  const done = await until(
    'the large PDF ingested',
    () => files.get(fileId),
    (r) => r?.status === 'completed' || r?.status === 'failed',
  );
  expect(done).toMatchObject({
    status: 'completed',
    pages: largePdfPages(shape),
    size: pdf.byteLength,
    sha256: createHash('sha256').update(pdf).digest('hex'),
  });
  expect(partPuts().length).toBeGreaterThanOrEqual(Math.floor(pdf.byteLength / PART_BYTES));
}, 180_000);

test('a body that is no document read here is refused on its first KiB: the download is cut, nothing is stored', async () => {
  // A PNG image (its signature, then bytes): refused from its head, whatever its length.
  const png = Buffer.alloc(3 * PART_BYTES, 7);
  png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  app.pdfs.serve('/page.html', { body: png, contentType: 'image/png' });
  const created = await app.request('POST', '/upload', {
    token,
    body: { fileName: 'page.pdf', contentType: 'application/pdf', size: 1000 },
  });
  const fileId: string = created.body.data.fileId;
  const before = app.s3Requests.length;
  await app.request('POST', '/message/pdf', { token, body: { url: `${app.pdfs.url}/page.html`, fileId } });
  const failed = await until(
    'the image refused',
    () => files.get(fileId),
    (r) => r?.status === 'failed',
  );
  expect(failed).toMatchObject({
    failure: { reason: 'UNSUPPORTED_TYPE', message: expect.stringContaining('a PNG image') },
  });
  expect(app.s3Requests.slice(before).filter((r) => r.includes('source.pdf'))).toEqual([]);
  const [get] = app.pdfs.responses('/page.html').filter((r) => r.method === 'GET');
  await get!.finished;
  expect(get!.aborted).toBe(true); // the rest of the body was never read
});

describe('pdf-extract: the PDF as a temporary file, read in ranges', () => {
  let scratch: string;
  let storage: FileStorage;
  const tmpdirBefore = process.env.TMPDIR;
  beforeAll(async () => {
    // This suite's own temporary directory: what is left in it is this suite's doing.
    scratch = await mkdtemp(join(tmpdir(), 'large-files-'));
    storage = new FileStorage(app.clients().s3, app.config.BUCKET_NAME!);
  });
  afterAll(async () => {
    process.env.TMPDIR = tmpdirBefore;
    await rm(scratch, { recursive: true, force: true });
  });

  test('the object is streamed to a file of its own, removed after use; a missing object leaves nothing', async () => {
    const own = join(scratch, 'tmp');
    await rm(own, { recursive: true, force: true });
    await mkdir(own);
    process.env.TMPDIR = own;
    const bytes = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(2 * PART_BYTES, 7)]);
    await storage.putLarge('work/local-pdf/source.pdf', bytes, 'application/pdf');

    const [first, second] = await Promise.all([
      localCopy(storage, 'work/local-pdf/source.pdf'),
      localCopy(storage, 'work/local-pdf/source.pdf'),
    ]);
    expect(first.path).not.toBe(second.path); // concurrent copies never share a name
    expect((await readFile(first.path)).equals(bytes)).toBe(true);
    await first.remove();
    await second.remove();
    expect(existsSync(first.path)).toBe(false);

    await expect(localCopy(storage, 'work/local-pdf/missing.pdf')).rejects.toMatchObject({ name: 'NoSuchKey' });
    expect(await readdir(own)).toEqual([]);
  });

  /** A two-page PDF of this shape written to disk, then its text read by the bounded child from the file. */
  async function readTwoPages(name: string, shape: Parameters<typeof largePdf>[0]) {
    const path = join(scratch, name);
    await pipeline(Readable.from(largePdf(shape)), createWriteStream(path));
    const pages: string[] = [];
    const result = await extractTextBounded(path, {
      maxPages: 100,
      limits: extractLimits(app.config),
      onPage: (_page, text) => void pages.push(text),
    });
    expect(result).toMatchObject({ pages: 2, textPages: 2 });
    expect(pages[1]).toContain('folio 2.0');
    return result;
  }

  test('the child reads the file in ranges: an image no page uses is never loaded', async () => {
    const unusedImageBytes = 160 * 1024 * 1024;
    const result = await readTwoPages('unused-image.pdf', {
      bytes: 2 * 64 * 1024,
      imageBytesPerPage: 64 * 1024,
      unusedImageBytes,
    });
    // The whole file in the child would be its size at least (and pdf.js's own memory on top).
    expect(result.childPeakRssMb).toBeLessThan(unusedImageBytes / (1024 * 1024));
  }, 120_000);

  test('the child leaves the images of the pages it reads unloaded: text only', async () => {
    const imageBytesPerPage = 80 * 1024 * 1024;
    const result = await readTwoPages('page-images.pdf', { bytes: 2 * imageBytesPerPage, imageBytesPerPage });
    // Both images in the child would be 160 MB (and pdf.js's own memory on top).
    expect(result.childPeakRssMb).toBeLessThan((2 * imageBytesPerPage) / (1024 * 1024));
  }, 120_000);
});
