import { jest } from '@jest/globals';
import { loadConfig } from '#shared/config.ts';
import { PermanentFailure } from '#shared/files/failures.ts';
import { OcrEngine } from '#shared/pdf/ocr/engine.ts';
import { ocrPages } from '#shared/pdf/ocr/ocr-pages.ts';
import { ocrRenderLimits } from '#shared/pdf/ocr-stage.ts';
import { ocrHostilePdf, type OcrHostileClass } from '#test/helpers/hostile-pdfs.ts';
import { makeCcittScanPdf } from '#test/helpers/make-script-pdfs.ts';

// OCR's drawing in the bounded pdf.js child, with the real engine (one tesseract worker): a
// black-and-white (CCITT fax) scan is drawn with pdf.js's WebAssembly decoders and read; pages
// that draw nothing never reach the engine; documents that are ruinous to draw end as the typed
// failure TOO_COMPLEX with pdf-ocr's default limits (3008 MB), the child stopped.

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

test.each<[OcrHostileClass, RegExp]>([
  // Both refused before drawing: the operator list's groups, the image dictionary's size.
  ['transparency-groups', /^page 1 draws more than 10000 transparency groups$/],
  ['huge-image', /^an image of 16000×16000 pixels is larger than 64000000 pixels$/],
])('%s ends as TOO_COMPLEX with the default limits', async (kind, message) => {
  const outcome = await ocrPages(await ocrHostilePdf(kind), [1], engine, { dpi: 150, limits }).then(
    () => 'completed',
    (err: unknown) => err,
  );
  expect(outcome).toBeInstanceOf(PermanentFailure);
  expect(outcome).toMatchObject({ reason: 'TOO_COMPLEX' });
  expect((outcome as Error).message.replace('The PDF is too complex to process: ', '')).toMatch(message);
});

// Each runtime bound on its own, with the image budget relaxed so that pdf.js decodes the image.
const relaxed = { ...limits, maxImagePixels: 2 ** 32 };

test('past the time per page, the drawing child is stopped: TOO_COMPLEX', async () => {
  const outcome = await ocrPages(await ocrHostilePdf('huge-image'), [1], engine, {
    dpi: 150,
    limits: { ...relaxed, pageMs: 300, rssMb: 16_384 },
  }).catch((err: unknown) => err);
  expect(outcome).toMatchObject({
    reason: 'TOO_COMPLEX',
    message: 'The PDF is too complex to process: drawing one page took longer than 300 ms',
  });
});

test('past the resident size, the drawing child is stopped: TOO_COMPLEX', async () => {
  const outcome = await ocrPages(await ocrHostilePdf('huge-image'), [1], engine, {
    dpi: 150,
    limits: { ...relaxed, pageMs: 600_000, heapMb: 4096, rssMb: 400 },
  }).catch((err: unknown) => err);
  expect(outcome).toMatchObject({
    reason: 'TOO_COMPLEX',
    message: 'The PDF is too complex to process: drawing it needed more than 400 MB of memory',
  });
});
