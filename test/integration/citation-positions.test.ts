import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';
import { knownSentence, makeTextPdf } from '#test/helpers/make-pdf.ts';
import { makeScannedPdf } from '#test/helpers/make-script-pdfs.ts';

// Citations a reader can check, through the gateway: each source's charStart/charEnd index the
// text GET /message/pdf/{fileId}/pages/{page} returns, its boxes cover the quote where the PDF
// draws it (a generated text PDF, and a scan read by OCR), the page's image is a PNG of the page's
// shape drawn once and removed with the file, and a reply's markers only name verified sources.

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
interface Source {
  fileId: string;
  page: number;
  chunk: number;
  quote: string;
  charStart?: number;
  charEnd?: number;
  boxes: Box[];
  verified: boolean;
  cited: boolean;
}

// Where test/helpers/make-pdf.ts makeTextPdf draws: Helvetica 11 pt, x 48, baselines from 740 down by 18, on 612 × 792.
const TEXT = { x: 48, top: 740, step: 18, size: 11, width: 612, height: 792 };
// And make-script-pdfs.ts makePassagesPdf, the source of the scan: Helvetica 18 pt, x 56, baselines from 700 down by 28, lines up to 500 wide.
const SCAN = { x: 56, top: 700, step: 28, size: 18, wrap: 500 };
const PASSAGE =
  'The lighthouse keeper is named Margaret Hollis. She has kept the light burning for thirty years. Storms arrive from the north in November.';

let app: TestApp;
let token: string;
let helvetica: Awaited<ReturnType<PDFDocument['embedFont']>>;

beforeAll(async () => {
  helvetica = await (await PDFDocument.create()).embedFont(StandardFonts.Helvetica);
  app = await startTestApp({
    model: 'openai',
    pdfs: {
      '/known.pdf': { body: Buffer.from(await makeTextPdf(3, 8)) },
      '/scan.pdf': { body: Buffer.from(await makeScannedPdf([PASSAGE])) },
    },
    env: { OCR_WORKERS: '1', PDF_SYNC_WAIT_MS: '2000' },
  });
  ({ token } = await app.signIn('positions@example.com'));
}, 60_000);
afterAll(() => app?.stop());
beforeEach(() => app.ai.reset());

/** Uploads a record, ingests the served PDF into a new file chat and waits for it to complete. */
async function ingest(name: string): Promise<{ chatId: string; fileId: string }> {
  const chatId = (await app.request('POST', '/chat', { token, body: { name, type: 'file' } })).body.data.id;
  const upload = await app.request('POST', '/upload', {
    token,
    body: { fileName: name, contentType: 'application/pdf', size: 5000 },
  });
  const fileId = upload.body.data.fileId;
  await app.request('POST', '/message/pdf', { token, body: { url: `${app.pdfs.url}/${name}`, fileId, chatId } });
  for (;;) {
    const data = (await app.request('GET', `/message/pdf/${fileId}`, { token })).body.data.embeddingsData;
    if (data.status === 'completed') return { chatId, fileId };
    if (data.status === 'failed') throw new Error(`ingestion failed: ${JSON.stringify(data.failure)}`);
    await new Promise((r) => setTimeout(r, 100)); // polling the status, as a client does
  }
}

/** A new file chat with an ingested file attached: no history, so the prompt itself is the retrieval query. */
async function chatWith(fileId: string, name: string): Promise<string> {
  const chatId = (await app.request('POST', '/chat', { token, body: { name: 'again', type: 'file' } })).body.data.id;
  await app.request('POST', '/message/pdf', { token, body: { url: `${app.pdfs.url}/${name}`, fileId, chatId } });
  return chatId;
}

async function ask(chatId: string, prompt: string): Promise<{ response: string; sources: Source[] }> {
  const res = await app.request('POST', '/message/logged-in', { token, body: { chatId, prompt } });
  expect(res.status).toBe(200);
  return res.body.data;
}

const page = (fileId: string, n: number | string, as = token) =>
  app.request('GET', `/message/pdf/${fileId}/pages/${n}`, { token: as });

async function objectsUnder(prefix: string): Promise<string[]> {
  const out = await app.clients().s3.send(new ListObjectsV2Command({ Bucket: app.bucket, Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key!);
}

/** Whether the boxes cover the rectangle (fractions of the page), within `slack` on every side. */
const covers = (boxes: Box[], r: Box, slack: { x: number; y: number }) =>
  boxes.some(
    (b) =>
      b.x <= r.x + slack.x &&
      b.y <= r.y + slack.y &&
      b.x + b.width >= r.x + r.width - slack.x &&
      b.y + b.height >= r.y + r.height - slack.y,
  );

/** Where the PDF drew a run of text: from the left end of `before` to its end, the glyphs' body (baseline to cap height). */
function drawn(line: { x: number; baseline: number; size: number }, before: string, text: string): Box {
  const x = line.x + helvetica.widthOfTextAtSize(before, line.size);
  const width = helvetica.widthOfTextAtSize(text, line.size);
  const capTop = line.baseline + 0.7 * line.size;
  return {
    x: x / TEXT.width,
    y: (TEXT.height - capTop) / TEXT.height,
    width: width / TEXT.width,
    height: (0.7 * line.size) / TEXT.height,
  };
}

describe('a text PDF', () => {
  let fileId: string;
  beforeAll(async () => {
    ({ fileId } = await ingest('known.pdf'));
  }, 60_000);

  test("offsets index the page's text exactly, for several sources and a chunk across pages", async () => {
    // The three pages fit one chunk: quotes on pages 1 to 3 come from the same multi-page chunk.
    const chunk = await app
      .clients()
      .db.send(new GetCommand({ TableName: app.tableName, Key: { PK: `FILE#${fileId}`, SK: 'CHUNK#000000' } }));
    expect([chunk.Item!.page, chunk.Item!.pageEnd]).toEqual([1, 3]);
    const texts = new Map<number, string>();
    for (const [p, i] of [
      [1, 2],
      [2, 0],
      [3, 5],
    ] as const) {
      const { sources } = await ask(await chatWith(fileId, 'known.pdf'), knownSentence(p, i));
      expect(sources.length).toBeGreaterThan(0);
      expect(sources[0]).toMatchObject({ page: p, quote: knownSentence(p, i), verified: true, chunk: 0 });
      for (const source of sources) {
        expect(source.verified).toBe(true);
        if (!texts.has(source.page)) {
          const res = await page(fileId, source.page);
          expect(res.status).toBe(200);
          texts.set(source.page, res.body.data.text);
        }
        expect(texts.get(source.page)!.slice(source.charStart, source.charEnd)).toBe(source.quote);
      }
    }
  });

  test('boxes cover the quote where the PDF drew it, and little else', async () => {
    const sentence = knownSentence(2, 3);
    const { sources } = await ask(await chatWith(fileId, 'known.pdf'), sentence);
    const source = sources[0]!;
    expect(source.quote).toBe(sentence);
    const glyphs = drawn({ x: TEXT.x, baseline: TEXT.top - 3 * TEXT.step, size: TEXT.size }, '', sentence);
    expect(source.boxes).toHaveLength(1);
    const onePoint = { x: 1 / TEXT.width, y: 1 / TEXT.height };
    expect(covers(source.boxes, glyphs, onePoint)).toBe(true);
    // Tight: no wider than the sentence, no taller than a line.
    const [box] = source.boxes;
    expect(box!.width).toBeLessThan(glyphs.width + 2 / TEXT.width);
    expect(box!.height).toBeLessThan(TEXT.step / TEXT.height);
  });

  test("the page's image is a PNG of the page's shape, drawn once; a stranger cannot read the page", async () => {
    const first = await page(fileId, 2);
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ page: 2, width: 612, height: 792 });
    const png = Buffer.from(await (await fetch(first.body.data.imageUrl)).arrayBuffer());
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
    const [width, height] = [png.readUInt32BE(16), png.readUInt32BE(20)];
    expect(Math.abs(width / height - 612 / 792)).toBeLessThan(1 / Math.min(width, height));
    expect(width).toBeGreaterThan(600);

    // Replaced behind the service's back: a second request signs the kept object, it draws nothing.
    const [key] = (await objectsUnder(`vectors/${fileId}/`)).filter((k) => k.endsWith('page-00002.png'));
    await app
      .clients()
      .s3.send(new PutObjectCommand({ Bucket: app.bucket, Key: key, Body: 'kept', ContentType: 'image/png' }));
    const second = await page(fileId, 2);
    expect(await (await fetch(second.body.data.imageUrl)).text()).toBe('kept');
    expect(second.body.data.text).toBe(first.body.data.text);

    const stranger = (await app.signIn('stranger@example.com')).token;
    const refused = await page(fileId, 2, stranger);
    expect(refused.status).toBe(404);
    expect(refused.body).toMatchObject({ success: false, statusCode: 404 });
    expect(refused.text).not.toContain(first.body.data.text.slice(0, 20));
  });

  test('a page out of range is 404, a bad page number 400, a file not ingested 409', async () => {
    expect((await page(fileId, 4)).status).toBe(404);
    for (const bad of ['0', 'abc', '1.5', '-1']) expect((await page(fileId, bad)).status).toBe(400);
    const upload = await app.request('POST', '/upload', {
      token,
      body: { fileName: 'later.pdf', contentType: 'application/pdf', size: 5000 },
    });
    const notReady = await page(upload.body.data.fileId, 1);
    expect(notReady.status).toBe(409);
    expect(notReady.body).toMatchObject({ success: false, statusCode: 409 });
    expect(notReady.body.message).toMatch(/uploaded; its pages can be read once/);
  });

  test('a marker naming an unverified source is removed (a chunk stored before positions were kept)', async () => {
    const { chatId: oldChat, fileId: oldFile } = await ingest('known.pdf');
    const key = { PK: `FILE#${oldFile}`, SK: 'CHUNK#000000' };
    const { Item } = await app.clients().db.send(new GetCommand({ TableName: app.tableName, Key: key }));
    const { runs: _runs, spans: _spans, ...before } = Item!;
    await app.clients().db.send(new PutCommand({ TableName: app.tableName, Item: before }));
    app.ai.setReply('It says so [1].');
    const { response, sources } = await ask(oldChat, knownSentence(1, 4));
    expect(response).toBe('It says so .');
    expect(sources[0]).toMatchObject({ quote: knownSentence(1, 4), verified: false, boxes: [], cited: false });
    expect(sources[0]).not.toHaveProperty('charStart');

    // Nor was its PDF kept (a file completed before pages were): its pages cannot be drawn, and it says so.
    const [source] = (await objectsUnder(`vectors/${oldFile}/`)).filter((k) => k.endsWith('/source.pdf'));
    await app.clients().s3.send(new DeleteObjectCommand({ Bucket: app.bucket, Key: source }));
    const undrawable = await page(oldFile, 1);
    expect(undrawable.status).toBe(409);
    expect(undrawable.body.message).toMatch(/ingest it again/);
  });

  test("deleting the file removes its pages' texts, images and PDF", async () => {
    const { fileId: doomed } = await ingest('known.pdf');
    expect((await page(doomed, 1)).status).toBe(200);
    const kept = await objectsUnder(`vectors/${doomed}/`);
    expect(kept.filter((k) => /(text-pages-00000\.json|page-00001\.png)$/.test(k))).toHaveLength(2);
    expect(kept.some((k) => k.endsWith('/source.pdf'))).toBe(true);
    expect((await app.request('DELETE', `/upload/${doomed}`, { token })).status).toBe(200);
    expect(await objectsUnder(`vectors/${doomed}/`)).toEqual([]);
  });
});

test('on a scan read by OCR, boxes cover the quoted words where the scan shows them', async () => {
  const { chatId, fileId } = await ingest('scan.pdf');
  const { sources } = await ask(chatId, 'What is the name of the lighthouse keeper?');
  const source = sources[0]!;
  expect(source).toMatchObject({ page: 1, verified: true });
  const text = (await page(fileId, 1)).body.data.text as string;
  expect(text.slice(source.charStart, source.charEnd)).toBe(source.quote);
  expect(source.quote).toContain('Margaret Hollis');

  // The passage's lines as makePassagesPdf wrapped them, and each quoted word where it was drawn.
  const lines: string[] = [];
  for (const word of PASSAGE.split(' ')) {
    const last = lines.at(-1);
    if (last && helvetica.widthOfTextAtSize(`${last} ${word}`, SCAN.size) <= SCAN.wrap)
      lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  const quoted = source.quote.split(' ');
  const slack = { x: 3 / TEXT.width, y: 3 / TEXT.height };
  let checked = 0;
  lines.forEach((line, l) => {
    const words = line.split(' ');
    words.forEach((word, w) => {
      if (!quoted.includes(word)) return;
      const before = words.slice(0, w).join(' ') + (w ? ' ' : '');
      const glyphs = drawn(
        { x: SCAN.x, baseline: SCAN.top - l * SCAN.step, size: SCAN.size },
        before,
        word.replace(/\.$/, ''),
      );
      expect(covers(source.boxes, glyphs, slack)).toBe(true);
      checked++;
    });
  });
  expect(checked).toBeGreaterThanOrEqual(4);
  // Tight: the boxes' area is about the quoted words' (lines of 18 pt text), not the page's.
  const area = source.boxes.reduce((n, b) => n + b.width * b.height, 0);
  expect(area).toBeLessThan(0.05);
}, 240_000);
