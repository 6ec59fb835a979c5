import { randomBytes } from 'node:crypto';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { useTestApp } from '#test/helpers/app.ts';
import { knownSentence } from '#test/helpers/make-pdf.ts';
import { until } from '#test/helpers/until.ts';
import { FileRepository } from '#shared/files/file-repository.ts';

// A PDF larger than one part goes up as an S3 multipart upload (a presigned PUT per part, the
// ETags sent to complete it), then is ingested from its downloadUrl like any upload. The part
// size is S3's smallest (5 MiB, which the local S3 enforces too).

const PART_BYTES = 5 * 1024 * 1024;

let files: FileRepository;

const app = useTestApp(
  {
    model: 'openai',
    user: 'multipart@example.com',
    env: { UPLOAD_PART_BYTES: String(PART_BYTES), PDF_SYNC_WAIT_MS: '0' },
  },
  {
    ready: (app) => {
      files = new FileRepository(app.clients().db, app.config.TABLE_NAME);
    },
  },
);

/** A 3-page text PDF made larger than a part (or `padding` bytes larger) by an attached file of random bytes. */
async function largePdf(padding = PART_BYTES + 512 * 1024): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let page = 1; page <= 3; page++) {
    const p = doc.addPage([612, 792]);
    for (let i = 0; i < 10; i++) p.drawText(knownSentence(page, i), { x: 48, y: 740 - 18 * i, size: 11, font });
  }
  await doc.attach(randomBytes(padding), 'padding.bin', { mimeType: 'application/octet-stream' });
  return doc.save();
}

/** The file's record once its ingestion has ended, completed or failed. */
const ended = (what: string, fileId: string) =>
  until(
    what,
    () => files.get(fileId),
    (r) => r?.status === 'completed' || r?.status === 'failed',
  );

/** The parts of a multipart upload, numbered in the order of their ETags. */
const partsOf = (etags: string[]) => etags.map((etag, i) => ({ partNumber: i + 1, etag }));
/** Two parts whose ETags no upload gave. */
const MADE_UP_ETAGS = partsOf(['"x"', '"y"']);
const complete = (fileId: string, parts: { partNumber: number; etag: string }[], token = app.token) =>
  app.request('POST', `/upload/${fileId}/complete`, { token, body: { parts } });

const create = (size: number) =>
  app.request('POST', '/upload/multipart', {
    token: app.token,
    body: { fileName: 'large.pdf', contentType: 'application/pdf', size },
  });

test('a PDF of two parts: each part PUT to its URL, completed with the ETags, then ingested', async () => {
  const pdf = await largePdf();
  expect(pdf.byteLength).toBeGreaterThan(PART_BYTES);
  const res = await create(pdf.byteLength);
  expect(res.status).toBe(201);
  const { fileId, parts, partSize, downloadUrl } = res.body.data;
  expect(partSize).toBe(PART_BYTES);
  expect(parts.map((p: { partNumber: number; size: number }) => [p.partNumber, p.size])).toEqual([
    [1, PART_BYTES],
    [2, pdf.byteLength - PART_BYTES],
  ]);

  // Completing before any part is sent, or with the parts out of order, is the client's mistake.
  const early = await complete(fileId, MADE_UP_ETAGS);
  expect(early.status).toBe(400);
  const shuffled = await complete(fileId, [...MADE_UP_ETAGS].reverse());
  expect(shuffled).toMatchObject({ status: 400, body: { errors: [{ code: 'PARTS_MISMATCH' }] } });

  const etags: string[] = [];
  for (const part of parts as { partNumber: number; size: number; url: string }[]) {
    const start = (part.partNumber - 1) * partSize;
    const put = await fetch(part.url, { method: 'PUT', body: pdf.subarray(start, start + part.size) });
    expect(put.status).toBe(200);
    etags.push(put.headers.get('etag')!);
  }
  const completed = await complete(fileId, partsOf(etags));
  expect(completed.status).toBe(200);
  expect(completed.body.data).toEqual({ fileId, status: 'uploaded', size: pdf.byteLength });
  const again = await complete(fileId, partsOf(etags));
  expect(again).toMatchObject({ status: 409, body: { message: 'This file has no multipart upload in progress' } });

  // The object is whole: it downloads byte for byte and ingests.
  expect(Buffer.from(await (await fetch(downloadUrl)).arrayBuffer()).equals(Buffer.from(pdf))).toBe(true);
  const ingest = await app.request('POST', '/message/pdf', { token: app.token, body: { url: downloadUrl, fileId } });
  expect([200, 202]).toContain(ingest.status);
  const done = await ended('the multipart upload ingested', fileId);
  expect(done).toMatchObject({ status: 'completed', pages: 3, size: pdf.byteLength });
}, 180_000);

test('an upload not completed is aborted by deleting the file; another user cannot complete it', async () => {
  const res = await create(PART_BYTES * 2);
  const { fileId } = res.body.data;
  const { token: stranger } = await app.signIn('stranger-multipart@example.com');
  const theirs = await complete(fileId, MADE_UP_ETAGS, stranger);
  expect(theirs.status).toBe(404);
  expect((await app.request('DELETE', `/upload/${fileId}`, { token: app.token })).status).toBe(200);
  expect(await files.get(fileId)).toBeUndefined();
  expect(
    (await app.request('POST', `/upload/${fileId}/complete`, { token: app.token, body: { parts: [] } })).status,
  ).toBe(400);
});

test('a PDF larger than one request to S3 may carry (12 MiB; the local S3 takes 11) is uploaded, downloaded and stored in parts, and ingests', async () => {
  const pdf = await largePdf(12 * 1024 * 1024);
  const { fileId, parts, partSize, downloadUrl } = (await create(pdf.byteLength)).body.data;
  const etags: string[] = [];
  for (const part of parts as { partNumber: number; size: number; url: string }[]) {
    const start = (part.partNumber - 1) * partSize;
    etags.push(
      (await fetch(part.url, { method: 'PUT', body: pdf.subarray(start, start + part.size) })).headers.get('etag')!,
    );
  }
  const completed = await complete(fileId, partsOf(etags));
  expect(completed.status).toBe(200);
  // pdf-fetch downloads it whole and stores it again: in parts, or the local S3 refuses it (413).
  expect([200, 202]).toContain(
    (await app.request('POST', '/message/pdf', { token: app.token, body: { url: downloadUrl, fileId } })).status,
  );
  const done = await ended('the 12 MiB PDF ingested', fileId);
  expect(done).toMatchObject({ status: 'completed', pages: 3, size: pdf.byteLength });
}, 180_000);
