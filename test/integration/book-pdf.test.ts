import { DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { bookPdf } from '#test/helpers/book-pdf.ts';
import { fixturePdf, knownSentence } from '#test/helpers/make-pdf.ts';

// Books as people upload them: a cover that is one large photograph, then pages of text
// (docs/DECISIONS.md, Bounds where the cost is). Drawing is bounded page by page, by what the
// drawing function's memory affords: a 93 M pixel cover is drawn once, for OCR, and kept for the
// page route; and a cover too large for the function leaves that one page unreadable, never the book.
// A page that cannot be drawn is remembered: no later request draws it again.

let app: TestApp;
let token: string;

const TEXT_PAGES = 12;

beforeAll(async () => {
  // The cover takes seconds to draw, many more on a loaded machine: the time per page is not under test here.
  app = await startTestApp({ pdfs: true, env: { OCR_WORKERS: '1', PDF_SYNC_WAIT_MS: '2000', OCR_PAGE_MS: '300000' } });
  ({ token } = await app.signIn('reader@example.com'));
  const [book, poster] = await Promise.all([
    bookPdf({ textPages: TEXT_PAGES }),
    // 400 M pixels: about 6.5 GB to draw, beyond any function's drawing child here.
    bookPdf({ textPages: TEXT_PAGES, coverWidth: 20_000, coverHeight: 20_000 }),
  ]);
  app.pdfs.serve('/book.pdf', { body: Buffer.from(book) });
  app.pdfs.serve('/poster-cover.pdf', { body: Buffer.from(poster) });
  app.pdfs.serve('/tracemonkey.pdf', { body: await fixturePdf('tracemonkey.pdf') });
  app.pdfs.serve('/hello-world.pdf', { body: await fixturePdf('hello-world.pdf') });
}, 60_000);
afterAll(() => app?.stop());

/** Ingests a served PDF into a new file chat and waits until it completes or fails. */
async function ingest(name: string) {
  const chatId = (await app.request('POST', '/chat', { token, body: { name, type: 'file' } })).body.data.id;
  const upload = await app.request('POST', '/upload', {
    token,
    body: { fileName: name, contentType: 'application/pdf', size: 5000 },
  });
  const fileId = upload.body.data.fileId as string;
  const res = await app.request('POST', '/message/pdf', {
    token,
    body: { url: `${app.pdfs.url}/${name}`, fileId, chatId },
  });
  expect([200, 202]).toContain(res.status);
  for (;;) {
    const data = (await app.request('GET', `/message/pdf/${fileId}`, { token })).body.data.embeddingsData;
    if (data.status === 'completed' || data.status === 'failed') return { data, chatId, fileId };
    await new Promise((r) => setTimeout(r, 250)); // polling the status, as a client does
  }
}

/** Takes away the PDF a run keeps for drawing its pages on request. */
async function deleteKeptSource(fileId: string) {
  const { s3 } = app.clients();
  const kept = await s3.send(new ListObjectsV2Command({ Bucket: app.bucket, Prefix: `vectors/${fileId}/` }));
  const source = kept.Contents!.map((o) => o.Key!).find((k) => k.endsWith('/source.pdf'))!;
  await s3.send(new DeleteObjectCommand({ Bucket: app.bucket, Key: source }));
}

const page = (fileId: string, n: number) => app.request('GET', `/message/pdf/${fileId}/pages/${n}`, { token });

async function ask(chatId: string, prompt: string) {
  const res = await app.request('POST', '/message/logged-in', { token, body: { chatId, prompt } });
  expect(res.status).toBe(200);
  return res.body.data as { sources: { page: number; quote: string }[] };
}

/** Ingests a served book: completed with every text page read, and a sentence of page `asked` found there. */
async function ingestBook(name: string, expected: { unreadablePages: number; asked: number }) {
  const { data, chatId, fileId } = await ingest(name);
  expect(data).toMatchObject({
    status: 'completed',
    pages: TEXT_PAGES + 1,
    textPages: TEXT_PAGES,
    unreadablePages: expected.unreadablePages,
  });
  const sentence = knownSentence(expected.asked, 3);
  const reply = await ask(chatId, sentence);
  expect(reply.sources[0]).toMatchObject({ page: expected.asked, quote: expect.stringContaining(sentence) });
  return fileId;
}

test('a book whose cover is one 93 M pixel photograph completes, and its cover, drawn once for OCR, is kept for the reader', async () => {
  const fileId = await ingestBook('book.pdf', { unreadablePages: 0, asked: 7 });

  // The cover, drawn for OCR, was kept for the reader then: without the PDF kept for drawing (a
  // page drawn now would say it is missing), its page still answers with the image.
  await deleteKeptSource(fileId);
  const cover = await page(fileId, 1);
  expect(cover.status).toBe(200);
  expect(cover.body.data).toMatchObject({ page: 1, width: 432, height: 648 });
  const png = Buffer.from(await (await fetch(cover.body.data.imageUrl)).arrayBuffer());
  expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
  expect(png.readUInt32BE(16)).toBe(Math.floor((432 * 110) / 72)); // IHDR width: the page's 110 dpi
  expect((await page(fileId, 2)).body.message).toMatch(/ingest it again/);
  // OCR of the cover takes seconds alone, minutes beside a full suite at load ~8.
}, 600_000);

test('a cover too large for the drawing function leaves that page unreadable, never the book; its page answers 409, remembered', async () => {
  // Its neighbour is read.
  const fileId = await ingestBook('poster-cover.pdf', { unreadablePages: 1, asked: 2 });

  const cover = await page(fileId, 1);
  expect(cover.status).toBe(409);
  expect(cover.body).toMatchObject({ success: false, statusCode: 409 });
  expect(cover.body.message).toMatch(
    /^Page 1 cannot be drawn: an image of 20000×20000 pixels needs about \d+ MB to draw/,
  );

  // The PDF kept for drawing taken away: a page drawn again would now say the PDF is missing.
  await deleteKeptSource(fileId);
  const again = await page(fileId, 1);
  expect(again.status).toBe(409);
  expect(again.body.message).toBe(cover.body.message);
  expect((await page(fileId, 2)).body.message).toMatch(/ingest it again/);
}, 300_000);

test.each([
  ['tracemonkey.pdf', 14],
  ['hello-world.pdf', 1],
])(
  'the real-world fixture %s completes, and every one of its %i pages is drawn: no bound refuses it',
  async (name, pages) => {
    const { data, fileId } = await ingest(name);
    expect(data).toMatchObject({ status: 'completed', pages, unreadablePages: 0 });
    for (let n = 1; n <= pages; n++) {
      const res = await page(fileId, n);
      expect([n, res.status]).toEqual([n, 200]);
    }
  },
  300_000,
);
