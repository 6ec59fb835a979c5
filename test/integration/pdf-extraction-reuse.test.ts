import { useTestApp } from '#test/helpers/app.ts';
import { uploadFile } from '#test/helpers/files.ts';
import { makeScannedPdf } from '#test/helpers/make-script-pdfs.ts';
import { until } from '#test/helpers/until.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import type { CompletedFile } from '#shared/files/file-record.ts';

// Identical bytes are not extracted or recognised twice: a second file of a scan the user already
// ingested takes the first one's chunks (its OCR text, pages and OCR pages) and never reaches
// pdf-ocr.

let files: FileRepository;

const app = useTestApp(
  {
    pdfs: true,
    user: 'reuse@example.com',
    env: { OCR_WORKERS: '1', OCR_PAGES_PER_MESSAGE: '2', PDF_SYNC_WAIT_MS: '0' },
  },
  {
    ready: async (app) => {
      files = new FileRepository(app.clients().db, app.config.TABLE_NAME);
      app.pdfs.serve('/scanned.pdf', { body: Buffer.from(await makeScannedPdf()) });
    },
    timeout: 60_000,
  },
);

async function ingest() {
  const fileId = await uploadFile(app, app.token, 'scan.pdf');
  const res = await app.request('POST', '/message/pdf', {
    token: app.token,
    body: { url: `${app.pdfs.url}/scanned.pdf`, fileId },
  });
  expect(res.status).toBe(202);
  return until(
    `file ${fileId} completed`,
    () => files.get(fileId),
    (r) => r?.status === 'completed' || r?.status === 'failed',
  );
}

test('a second upload of the same scanned bytes takes the first one’s OCR text: no OCR range, no OCR pages counted', async () => {
  const first = (await ingest()) as CompletedFile;
  expect(first).toMatchObject({ status: 'completed', pages: 5, ocrPages: 5, ocrRangesTotal: 3 });
  const usage = async () => (await app.request('GET', '/me', { token: app.token })).body.data.usage.pages;
  expect(await usage()).toEqual({ ingested: 5, ocr: 5 });

  const second = (await ingest())!;
  expect(second).toMatchObject({
    status: 'completed',
    pages: 5,
    ocrPages: 5,
    chunks: first.chunks,
    extractedFrom: first.id,
    reusedFrom: first.id,
  });
  // pdf-extract never sent it to pdf-ocr: no range was recorded, and no page was recognised.
  expect(second).not.toHaveProperty('ocrRangesTotal');
  expect(second).not.toHaveProperty('ocrPagesTotal');
  expect(await usage()).toEqual({ ingested: 10, ocr: 5 });
}, 300_000);
