import { jest } from '@jest/globals';
import { loadConfig } from '#shared/config/all.ts';
import { PermanentFailure } from '#shared/files/failures.ts';
import { OcrEngine } from '#shared/pdf/ocr/engine.ts';
import { ocrPages } from '#shared/pdf/ocr/ocr-pages.ts';
import { ocrRenderLimits } from '#shared/ingestion/ocr-stage.ts';
import { ocrHostilePdf, type OcrHostileClass } from '#test/helpers/hostile-pdfs.ts';
import { makeCcittScanPdf } from '#test/helpers/make-script-pdfs.ts';

// OCR's drawing in the bounded pdf.js child, with the real engine (one tesseract worker): a
// black-and-white (CCITT fax) scan is drawn with pdf.js's WebAssembly decoders and read; pages
// that draw nothing never reach the engine; a page holding an image costlier than the child can
// afford is not drawn (unreadable, before anything is decoded); documents that are ruinous to draw
// end as the typed failure TOO_COMPLEX with pdf-ocr's default limits (3008 MB), the child stopped.

jest.setTimeout(180_000);

const limits = ocrRenderLimits(loadConfig({ TABLE_NAME: 'ocr-bounds' }), { memoryMb: 3008 });
let engine: OcrEngine;
beforeAll(async () => {
  engine = await OcrEngine.create({ languages: ['eng'], workers: 1 });
});
afterAll(() => engine?.close());

test('a CCITT scan is read, and its empty pages are never sent to the engine', async () => {
  const pdf = await makeCcittScanPdf([null, 'The lighthouse keeper is named Margaret Hollis.', null]);
  const recognise = jest.spyOn(engine, 'recognise');
  try {
    const pages = await ocrPages(pdf, [1, 2, 3], engine, { dpi: 150, limits });
    expect(pages).toEqual([
      { page: 1, text: '', verdict: { usable: false, reason: 'empty' }, confidence: 0, recognised: false },
      {
        page: 2,
        text: 'The lighthouse keeper is named Margaret Hollis.',
        verdict: { usable: true },
        confidence: expect.any(Number),
        recognised: true,
        // Where the recognised words are: one span per word, in the page's text.
        layout: { width: 612, height: 792, spans: expect.any(Array) },
      },
      { page: 3, text: '', verdict: { usable: false, reason: 'empty' }, confidence: 0, recognised: false },
    ]);
    // `[start, end, x, y, width, height]` per word: "The" first, at the start of the text.
    expect(pages[1]!.layout!.spans).toHaveLength(7 * 6);
    expect(pages[1]!.layout!.spans.slice(0, 2)).toEqual([0, 3]);
    expect(recognise).toHaveBeenCalledTimes(1);
  } finally {
    recognise.mockRestore();
  }
});

test('a page holding an image costlier than the child can afford is unreadable, its neighbours drawn; nothing is decoded', async () => {
  const { PDFDocument } = await import('pdf-lib');
  const doc = await PDFDocument.create();
  const [hugePage] = await doc.copyPages(await PDFDocument.load(await ocrHostilePdf('huge-image')), [0]);
  const [textPage] = await doc.copyPages(
    await PDFDocument.load(await makeCcittScanPdf(['A lighthouse on the rocks.'])),
    [0],
  );
  doc.addPage(hugePage!);
  doc.addPage(textPage!);
  let childPeakRssMb = Infinity;
  const pages = await ocrPages(Buffer.from(await doc.save()), [1, 2], engine, {
    dpi: 150,
    limits,
    onStats: (s) => (childPeakRssMb = s.childPeakRssMb ?? Infinity),
  });
  expect(pages.map((p) => [p.page, p.recognised, p.verdict])).toEqual([
    [1, false, { usable: false, reason: 'undrawable' }],
    [2, true, { usable: true }],
  ]);
  expect(pages[1]!.text).toBe('A lighthouse on the rocks.');
  // The 256 MB (1 GB as RGBA) image was never decoded.
  expect(childPeakRssMb).toBeLessThan(400);
});

test.each<[OcrHostileClass, RegExp]>([
  // Refused before drawing: the operator list's groups.
  ['transparency-groups', /^page 1 draws more than 10000 transparency groups$/],
])('%s ends as TOO_COMPLEX by its own bound, the other limits the defaults', async (kind, message) => {
  // The time per page is the one default raised: on a loaded machine building the operator list
  // can outlast it, and the bound under test here is the count (the time bound has its own test).
  const countOnly = { ...limits, pageMs: 150_000 };
  const outcome = await ocrPages(await ocrHostilePdf(kind), [1], engine, { dpi: 150, limits: countOnly }).then(
    () => 'completed',
    (err: unknown) => err,
  );
  expect(outcome).toBeInstanceOf(PermanentFailure);
  expect(outcome).toMatchObject({ reason: 'TOO_COMPLEX' });
  expect((outcome as Error).message.replace('The PDF is too complex to process: ', '')).toMatch(message);
});

// Each runtime bound on its own: a child large enough for the image to be decoded, then too slow;
// images each within the budget of a small child, together beyond it.
test('past the time per page, the drawing child is stopped: TOO_COMPLEX', async () => {
  const outcome = await ocrPages(await ocrHostilePdf('huge-image'), [1], engine, {
    dpi: 150,
    limits: { ...limits, pageMs: 300, rssMb: 16_384 },
  }).catch((err: unknown) => err);
  expect(outcome).toMatchObject({
    reason: 'TOO_COMPLEX',
    message: 'The PDF is too complex to process: drawing one page took longer than 300 ms',
  });
});

test('past the resident size, the drawing child is stopped: TOO_COMPLEX', async () => {
  const outcome = await ocrPages(await ocrHostilePdf('many-images'), [1], engine, {
    dpi: 150,
    limits: { ...limits, pageMs: 600_000, heapMb: 4096, rssMb: 400 },
  }).catch((err: unknown) => err);
  expect(outcome).toMatchObject({
    reason: 'TOO_COMPLEX',
    message: 'The PDF is too complex to process: drawing it needed more than 400 MB of memory',
  });
});
