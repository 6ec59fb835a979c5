import { jest } from '@jest/globals';
import { loadConfig } from '#shared/config/all.ts';
import { extractTextBounded, type ExtractLimits } from '#shared/pdf/bounded-extract.ts';
import { extractLimits } from '#shared/ingestion/extract-stage.ts';
import { PermanentFailure } from '#shared/files/failures.ts';
import { hostilePdf, plainRawPdf, type HostileClass } from '#test/helpers/hostile-pdfs.ts';
import { startTestApp, type TestApp } from '#test/helpers/app.ts';

// The hostile-document suite: every class of generated PDF ends as a typed failure or
// a completion, with the default limits of pdf-extract (1536 MB), through the bounded child
// process; each runtime limit (time per page, per document, resident size, heap) is shown on its
// own with the content pre-check relaxed; and through the whole service, the document fails the
// ingestion with 400 TOO_COMPLEX while the service goes on answering.

jest.setTimeout(120_000);

const defaults = extractLimits(loadConfig({ TABLE_NAME: 'hostile' }), { memoryMb: 1536 });
/** The pre-check relaxed, so that pdf.js itself meets the document and the child's limits. */
const relaxed: ExtractLimits = {
  ...defaults,
  content: { maxStreamBytes: 2 ** 30, maxContentBytes: 2 ** 40, maxCmapCodes: 2 ** 40 },
};

async function outcome(kind: HostileClass, limits: ExtractLimits = defaults) {
  const pages: number[] = [];
  try {
    const result = await extractTextBounded(await hostilePdf(kind), {
      maxPages: 2000,
      limits,
      onPage: (n) => void pages.push(n),
    });
    return { completed: result.pages, textPages: result.textPages, pages };
  } catch (err) {
    if (!(err instanceof PermanentFailure)) throw err;
    return { failed: err.reason, message: err.message };
  }
}

test.each<[HostileClass, object]>([
  ['cmap-8-ranges', { failed: 'TOO_COMPLEX', message: expect.stringMatching(/CMaps map more than/) }],
  ['cmap-1-range', { failed: 'TOO_COMPLEX', message: expect.stringMatching(/CMaps map more than/) }],
  ['noop-stream', { failed: 'TOO_COMPLEX', message: expect.stringMatching(/a stream expands to more than 32 MB/) }],
  ['font-bomb', { failed: 'TOO_COMPLEX', message: expect.stringMatching(/a stream expands to more than 32 MB/) }],
  ['shared-stream', { failed: 'TOO_COMPLEX', message: expect.stringMatching(/content expands to more than 256 MB/) }],
  // The loop in the page tree is cut by pdf.js (page 1 read, the looping kid counted as failed) and the form
  // that draws itself is drawn once: the text of the page is there.
  ['reference-loop', { completed: 2, textPages: 1, pages: [1] }],
  ['deep-nesting', { failed: 'NOT_PDF', message: expect.stringMatching(/no page could be read/) }],
  // pdf.js counts the kids, not the /Count the file announces.
  ['huge-page-count', { completed: 1, textPages: 1, pages: [1] }],
])('%s ends as %o with the default limits', async (kind, expected) => {
  expect(await outcome(kind)).toEqual(expected);
});

test('an honest page completes in the same child (a control)', async () => {
  const texts: string[] = [];
  const result = await extractTextBounded(plainRawPdf('Nothing to see here.'), {
    maxPages: 10,
    limits: defaults,
    onPage: (_n, t) => void texts.push(t),
  });
  expect(result).toMatchObject({ pages: 1, textPages: 1, failedPages: 0 });
  expect(texts).toEqual(['Nothing to see here.']);
});

test('past the time per page, the child is stopped: TOO_COMPLEX', async () => {
  expect(await outcome('noop-stream', { ...relaxed, pageMs: 300 })).toEqual({
    failed: 'TOO_COMPLEX',
    message: 'The PDF is too complex to process: reading one page took longer than 300 ms',
  });
});

test('past the time per document, the child is stopped: TOO_COMPLEX', async () => {
  expect(await outcome('shared-stream', { ...relaxed, documentMs: 1000 })).toEqual({
    failed: 'TOO_COMPLEX',
    message: 'The PDF is too complex to process: reading it took longer than 1000 ms',
  });
});

test('past the resident size, the child is stopped: TOO_COMPLEX', async () => {
  // A heap far above the resident limit, so that only the watcher can stop the child: with the
  // default heap (768 MB), a watcher starved of CPU by a loaded machine let the heap run out first.
  expect(await outcome('cmap-1-range', { ...relaxed, heapMb: 4096, rssMb: 160, pageMs: 600_000 })).toEqual({
    failed: 'TOO_COMPLEX',
    message: 'The PDF is too complex to process: reading it needed more than 160 MB of memory',
  });
});

test('a child that dies on its own (heap exhausted) is TOO_COMPLEX, and this process goes on', async () => {
  expect(await outcome('cmap-8-ranges', { ...relaxed, heapMb: 48, rssMb: 4096, pageMs: 600_000 })).toEqual({
    failed: 'TOO_COMPLEX',
    message: 'The PDF is too complex to process: reading it exhausted the reader (out of memory or a fatal error)',
  });
  // The next document is read as if nothing happened.
  expect(
    await extractTextBounded(plainRawPdf(), { maxPages: 10, limits: defaults, onPage: () => undefined }),
  ).toMatchObject({ pages: 1 });
});

test('the child that read a document reads the next one, and is still stopped past a limit', async () => {
  const read = () => extractTextBounded(plainRawPdf(), { maxPages: 10, limits: defaults, onPage: () => undefined });
  expect(await read()).toMatchObject({ pages: 1 });
  // Same heap as the document before: the waiting child takes it, and is stopped as a new one would be.
  expect(await outcome('noop-stream', { ...relaxed, pageMs: 300 })).toEqual({
    failed: 'TOO_COMPLEX',
    message: 'The PDF is too complex to process: reading one page took longer than 300 ms',
  });
  expect(await read()).toMatchObject({ pages: 1 });
  expect(await read()).toMatchObject({ pages: 1 });
});

describe('through the service', () => {
  let app: TestApp;
  let token: string;

  beforeAll(async () => {
    app = await startTestApp({ model: 'openai', pdfs: true });
    ({ token } = await app.signIn('hostile@example.com'));
  });
  afterAll(() => app?.stop());

  test('a CMap bomb fails the ingestion with 400 TOO_COMPLEX; the service answers meanwhile', async () => {
    const pdf = await hostilePdf('cmap-8-ranges');
    app.pdfs.serve('/bomb.pdf', { body: pdf });
    const upload = await app.request('POST', '/upload', {
      token,
      body: { fileName: 'bomb.pdf', contentType: 'application/pdf', size: pdf.length },
    });
    const { fileId } = upload.body.data;

    const ingesting = app.request('POST', '/message/pdf', { token, body: { url: `${app.pdfs.url}/bomb.pdf`, fileId } });
    const chats = await app.request('GET', '/chat', { token });
    expect(chats.status).toBe(200);

    const res = await ingesting;
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, statusCode: 400, errors: [{ code: 'TOO_COMPLEX' }] });
    const status = await app.request('GET', `/message/pdf/${fileId}`, { token });
    expect(status.body.data.embeddingsData).toMatchObject({ status: 'failed', failure: { reason: 'TOO_COMPLEX' } });
  });
});
