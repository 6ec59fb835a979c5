import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { type TestApp, useTestApp } from '#test/helpers/app.ts';
import { uploadFile } from '#test/helpers/files.ts';
import {
  ARABIC_LIGATURE_PAGES,
  ARABIC_PAGES,
  GLYPH_ID_PAGES,
  HEBREW_LIGATURE_PAGES,
  JAPANESE_PAGES,
  SCANNED_PAGES,
  makeArabicPdf,
  makeGlyphIdPdf,
  makeHebrewPdf,
  makeJapanesePdf,
  makeCcittScanPdf,
  makeScannedPdf,
} from '#test/helpers/make-script-pdfs.ts';
import { ocrHostilePdf } from '#test/helpers/hostile-pdfs.ts';
import { knownSentence } from '#test/helpers/make-pdf.ts';
import { PDFDocument, StandardFonts, popGraphicsState, pushGraphicsState } from 'pdf-lib';

/** Text on page 1; pages 2 and 4 blank (no content stream; an empty one); page 3 a scan; page 5 a drawn frame, no text. */
async function makeBlankPagesPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage([612, 792]).drawText(knownSentence(1, 0), { x: 48, y: 740, size: 11, font });
  doc.addPage([612, 792]);
  const [scan] = await doc.copyPages(await PDFDocument.load(await makeScannedPdf([SCANNED_PAGES[2]!])), [0]);
  doc.addPage(scan!);
  doc.addPage([612, 792]).pushOperators(pushGraphicsState(), popGraphicsState());
  doc.addPage([612, 792]).drawRectangle({ x: 72, y: 72, width: 468, height: 648, borderWidth: 2 });
  return doc.save();
}

// Documents a clean Latin text layer does not cover, through the whole service (offline
// provider, the SQS pipeline with its pdf-ocr stage, retrieval in a file chat): a scan read by
// OCR, a font without a Unicode map, Japanese and Arabic asked in their own script. OCR is
// CPU-heavy: one worker thread, small pages, a handful of them.

// Ranges of 2 pages, so OCR's progress has steps to show.
const app = useTestApp(
  {
    pdfs: true,
    user: 'scripts@example.com',
    env: { OCR_WORKERS: '1', OCR_PAGES_PER_MESSAGE: '2', PDF_SYNC_WAIT_MS: '2000' },
  },
  { ready: serveScripts, timeout: 60_000 },
);

async function serveScripts(app: TestApp) {
  const [scanned, glyphIds, blackAndWhite, hugeImage] = await Promise.all([
    makeScannedPdf(),
    makeGlyphIdPdf(),
    makeCcittScanPdf([SCANNED_PAGES[0]!, null, SCANNED_PAGES[2]!]),
    ocrHostilePdf('huge-image'),
  ]);
  app.pdfs.serve('/black-and-white.pdf', { body: Buffer.from(blackAndWhite) });
  app.pdfs.serve('/blank-pages.pdf', { body: Buffer.from(await makeBlankPagesPdf()) });
  app.pdfs.serve('/huge-image.pdf', { body: hugeImage });
  app.pdfs.serve('/scanned.pdf', { body: Buffer.from(scanned) });
  app.pdfs.serve('/glyph-ids.pdf', { body: Buffer.from(glyphIds) });
  app.pdfs.serve('/japanese.pdf', { body: Buffer.from(makeJapanesePdf()) });
  app.pdfs.serve('/arabic.pdf', { body: Buffer.from(makeArabicPdf()) });
  // Ligatures mapped to the letters they show, as word processors write them.
  app.pdfs.serve('/arabic-ligatures.pdf', { body: Buffer.from(makeArabicPdf(ARABIC_LIGATURE_PAGES, 'letters')) });
  app.pdfs.serve('/hebrew-ligatures.pdf', { body: Buffer.from(makeHebrewPdf(HEBREW_LIGATURE_PAGES, 'letters')) });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Ingests a served PDF into a new file chat; the final embeddingsData, the chat and every status seen. */
async function ingest(name: string, timeoutMs = 150_000) {
  const chatId = (await app.request('POST', '/chat', { token: app.token, body: { name, type: 'file' } })).body.data.id;
  const fileId = await uploadFile(app, app.token, name);
  const res = await app.request('POST', '/message/pdf', {
    token: app.token,
    body: { url: `${app.pdfs.url}/${name}`, fileId, chatId },
  });
  expect([200, 202, 400]).toContain(res.status);
  const deadline = Date.now() + timeoutMs;
  const seen: any[] = [];
  for (;;) {
    const data = (await app.request('GET', `/message/pdf/${fileId}`, { token: app.token })).body.data.embeddingsData;
    seen.push(data);
    if (data.status === 'completed' || data.status === 'failed') return { data, chatId, fileId, seen };
    if (Date.now() > deadline) throw new Error(`still ${data.status} (${data.stage})`);
    await sleep(250);
  }
}

const ask = async (chatId: string, prompt: string) => {
  const res = await app.request('POST', '/message/logged-in', { token: app.token, body: { chatId, prompt } });
  expect(res.status).toBe(200);
  return res.body.data as { response: string; sources: { page: number; quote: string; ocr?: boolean }[] };
};

/** Asks in the chat; its best source is `page`, read by OCR. */
const askOcr = async (chatId: string, prompt: string, page: number) => {
  const reply = await ask(chatId, prompt);
  expect(reply.sources[0]).toMatchObject({ page, ocr: true });
  return reply;
};

test('a scanned 5-page PDF is read by OCR, and a question about page 3 cites page 3 with a verbatim quote', async () => {
  const { data, chatId, seen, fileId } = await ingest('scanned.pdf');
  expect(data).toMatchObject({ status: 'completed', pages: 5, textPages: 0, ocrPages: 5, unreadablePages: 0 });
  // Ordinary scans keep no page image at ingestion (only a page holding a photograph of 16 M pixels
  // or more does): the page route draws them when a reader asks.
  const kept = await app
    .clients()
    .s3.send(new ListObjectsV2Command({ Bucket: app.bucket, Prefix: `vectors/${fileId}/` }));
  expect((kept.Contents ?? []).map((o) => o.Key!).filter((key) => key.endsWith('.png'))).toEqual([]);
  // GET /me counts the scan's pages, each read by OCR (the user's first ingestion).
  expect((await app.request('GET', '/me', { token: app.token })).body.data.usage.pages).toEqual({
    ingested: 5,
    ocr: 5,
  });
  // OCR's progress counts pages as its ranges (2, 2 and 1 pages, in any order) finish, never backwards.
  expect(data.progress.ocrPages).toEqual({ done: 5, total: 5 });
  const duringOcr = seen.filter((s) => s.stage === 'ocr').map((s) => s.progress.ocrPages);
  for (const p of duringOcr) expect(p).toEqual({ done: expect.any(Number), total: 5 });
  const done = duringOcr.map((p) => p.done);
  expect(done).toEqual([...done].sort((a, b) => a - b));
  expect(done.every((d) => d >= 0 && d <= 5)).toBe(true);
  expect(seen.filter((s) => s.stage === 'ocr').every((s) => s.ocr.pages.total === 5 && s.ocr.ranges === 3)).toBe(true);

  const reply = await ask(chatId, 'Who is the lighthouse keeper?');
  const [best] = reply.sources;
  expect(best).toMatchObject({ page: 3, ocr: true });
  // Verbatim: the quote is the recognised sentence of page 3, and the reply quotes it.
  expect(best!.quote).toContain('lighthouse keeper is named Margaret Hollis');
  expect(SCANNED_PAGES[2]).toContain(best!.quote.replace(/\s+$/, ''));
  expect(reply.response).toContain(best!.quote);
}, 240_000);

test('a PDF whose font has no Unicode map is read through OCR, never completed with its glyph ids', async () => {
  const { data, chatId } = await ingest('glyph-ids.pdf');
  expect(data).toMatchObject({ status: 'completed', pages: 2, textPages: 0, ocrPages: 2, unreadablePages: 0 });
  const reply = await askOcr(chatId, 'When is the cider festival held?', 2);
  expect(GLYPH_ID_PAGES[1]).toContain(reply.sources[0]!.quote.replace(/\s+$/, ''));
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the reply must hold no control characters
  expect(JSON.stringify(reply)).not.toMatch(/[\u0000-\u0008\u000e-\u001f]/);
}, 240_000);

test('a black-and-white (CCITT fax) scan is read by OCR; its empty page is neither read nor unreadable', async () => {
  const { data, chatId } = await ingest('black-and-white.pdf');
  expect(data).toMatchObject({ status: 'completed', pages: 3, textPages: 0, ocrPages: 2, unreadablePages: 0 });
  const reply = await askOcr(chatId, 'Who is the lighthouse keeper?', 3);
  expect(reply.sources[0]!.quote).toContain('lighthouse keeper is named Margaret Hollis');
}, 240_000);

test('pages that draw nothing are never sent to OCR; a scan and a page of drawing without text are', async () => {
  const { data, chatId } = await ingest('blank-pages.pdf');
  expect(data).toMatchObject({ status: 'completed', pages: 5, textPages: 1, ocrPages: 1, unreadablePages: 0 });
  // Pages 3 (the scan) and 5 (a frame: OCR decides it holds no text) were drawn; 2 and 4 were not.
  expect(data.progress.ocrPages).toEqual({ done: 2, total: 2 });
  await askOcr(chatId, 'Who is the lighthouse keeper?', 3);
}, 240_000);

test('a one-page PDF whose only page is a 16000×16000 image fails: the page cannot be drawn, and nothing else has text', async () => {
  const { data } = await ingest('huge-image.pdf');
  expect(data).toMatchObject({ status: 'failed', failure: { reason: 'UNREADABLE_TEXT' } });
  expect(data.failure.message).toMatch(/1 page\(s\) without a text layer hold images too large to draw/);
}, 240_000);

test('Japanese: a question typed in Japanese cites the right page', async () => {
  const { data, chatId } = await ingest('japanese.pdf');
  expect(data).toMatchObject({ status: 'completed', pages: 3, textPages: 3, ocrPages: 0, unreadablePages: 0 });
  const reply = await ask(chatId, '金閣寺は有名ですか');
  expect(reply.sources[0]).toMatchObject({ page: 2, quote: '金閣寺は有名です。' });
  expect(reply.sources[0]).not.toHaveProperty('ocr');
  expect(JAPANESE_PAGES[1]).toContain(reply.sources[0]!.quote);
});

test('Arabic: a question typed in Arabic cites the right page', async () => {
  const { data, chatId } = await ingest('arabic.pdf');
  expect(data).toMatchObject({ status: 'completed', pages: 3, textPages: 3, ocrPages: 0 });
  const reply = await ask(chatId, 'ما هو أطول نهر في أفريقيا؟');
  expect(reply.sources[0]).toMatchObject({ page: 2, quote: ARABIC_PAGES[1] });
});

test('Arabic and Hebrew words drawn with ligatures are found by the words a user types', async () => {
  const arabic = await ingest('arabic-ligatures.pdf');
  expect(arabic.data).toMatchObject({ status: 'completed', pages: 2, textPages: 2 });
  expect((await ask(arabic.chatId, 'الخطوط')).sources[0]).toMatchObject({ page: 1, quote: ARABIC_LIGATURE_PAGES[0] });
  expect((await ask(arabic.chatId, 'السلام عليكم')).sources[0]).toMatchObject({
    page: 2,
    quote: ARABIC_LIGATURE_PAGES[1],
  });
  const hebrew = await ingest('hebrew-ligatures.pdf');
  expect(hebrew.data).toMatchObject({ status: 'completed', pages: 2, textPages: 2 });
  expect((await ask(hebrew.chatId, 'ישראל')).sources[0]).toMatchObject({ page: 1, quote: HEBREW_LIGATURE_PAGES[0] });
  expect((await ask(hebrew.chatId, 'עץ אלון')).sources[0]).toMatchObject({ page: 2, quote: HEBREW_LIGATURE_PAGES[1] });
});
