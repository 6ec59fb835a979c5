import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Benchmark } from './lib/context.ts';
import { absoluteCheck, info, ratioCheck } from './lib/report.ts';
import { makeNumberedPdf } from './lib/pdfs.ts';

// OCR and the text-quality check, measured in this process:
// 1. The quality check's cost on a clean 300-page PDF: the time judgePageText takes over every
//    page's text, against the time pdf.js extraction of the same PDF takes (target ≤ 5 %).
// 2. OCR throughput: pages of a scanned PDF (test/helpers/make-script-pdfs.ts) drawn once at
//    150 dpi, then recognised by the service's engine (OcrEngine: one tesseract worker thread per
//    core, pages in parallel) and by plain tesseract.js (one createWorker, pages in turn) on the
//    same images, in the same run; pages per second, target ≥ 0.8 × plain tesseract.js.
// 3. Peak RSS of the process once OCR has run (tesseract's worker threads included).

const CLEAN_PAGES = 300;
const OCR_DPI = 150;

export const ocr: Benchmark = {
  name: 'ocr',
  title: 'OCR pages/s vs plain tesseract.js, quality-check cost, peak RSS',
  async run(ctx) {
    const { extractText } = await import('#shared/pdf/extract.ts');
    const { judgePageText } = await import('#shared/pdf/text-quality.ts');
    const { renderPages } = await import('#shared/pdf/ocr/render.ts');
    const { OcrEngine, tesseractPaths } = await import('#shared/pdf/ocr/engine.ts');
    const { makeScannedPdf, SCANNED_PAGES } = await import('../test/helpers/make-script-pdfs.ts');

    // 1. Quality check vs extraction.
    ctx.log('ocr: extracting a clean 300-page PDF');
    const clean = await makeNumberedPdf(CLEAN_PAGES, 1, 40);
    const texts: string[] = [];
    const extractRuns: number[] = [];
    for (let round = 0; round < 2; round++) {
      texts.length = 0;
      const t0 = performance.now();
      await extractText(clean.slice(), { maxPages: 1000, onPage: (_, text) => void texts.push(text) });
      extractRuns.push(performance.now() - t0);
    }
    const extractMs = Math.min(...extractRuns);
    const checkRuns: number[] = [];
    for (let round = 0; round < 5; round++) {
      const t0 = performance.now();
      for (const t of texts) judgePageText(t);
      checkRuns.push(performance.now() - t0);
    }
    const checkMs = Math.min(...checkRuns);

    // 2. OCR on the same images.
    ctx.log('ocr: drawing the scanned pages');
    const scanned = await makeScannedPdf(SCANNED_PAGES, 100);
    const images: Uint8Array[] = [];
    const r0 = performance.now();
    await renderPages(
      scanned,
      SCANNED_PAGES.map((_, i) => i + 1),
      { dpi: OCR_DPI },
      (p) => void images.push(p.pgm),
    );
    const renderMs = (performance.now() - r0) / images.length;

    const workers = availableParallelism();
    ctx.log(`ocr: plain tesseract.js (1 worker) and the service's engine (${workers} workers)`);
    const tesseract = await import('tesseract.js');
    const { createWorker, OEM } = (tesseract as unknown as { default?: typeof tesseract }).default ?? tesseract;
    const plain = await createWorker('eng', OEM.LSTM_ONLY, {
      ...tesseractPaths(['eng']),
      cacheMethod: 'none',
      gzip: true,
    });
    const engine = await OcrEngine.create({ languages: ['eng'], workers });
    let plainMs = 0;
    let engineMs = 0;
    let plainChars = 0;
    let engineChars = 0;
    try {
      await plain.recognize(Buffer.from(images[0]!)); // warm both before timing
      await engine.recognise(images[0]!);
      let t0 = performance.now();
      for (const image of images) plainChars += (await plain.recognize(Buffer.from(image))).data.text.length;
      plainMs = performance.now() - t0;
      t0 = performance.now();
      engineChars = (await Promise.all(images.map((image) => engine.recognise(image)))).reduce(
        (n, r) => n + r.text.length,
        0,
      );
      engineMs = performance.now() - t0;
    } finally {
      await Promise.all([plain.terminate(), engine.close()]);
    }
    const pagesPerSecond = (ms: number) => (images.length * 1000) / ms;
    const peakRssMb = process.resourceUsage().maxRSS / 1024;

    return {
      checks: [
        absoluteCheck('quality check / extraction time (clean 300-page PDF)', (checkMs / extractMs) * 100, '%', {
          max: 5,
        }),
        ratioCheck(
          'OCR pages per second (service engine vs plain tesseract.js)',
          pagesPerSecond(engineMs),
          pagesPerSecond(plainMs),
          'pages/s',
          { min: 0.8 },
        ),
        info('peak RSS of the process after OCR', peakRssMb, 'MB'),
      ],
      details: [
        {
          title: 'breakdown',
          header: ['what', 'value'],
          rows: [
            ['extraction of 300 pages (best of 2)', `${extractMs.toFixed(0)} ms`],
            ['quality check of 300 pages (best of 5)', `${checkMs.toFixed(2)} ms`],
            [`drawing a page at ${OCR_DPI} dpi`, `${renderMs.toFixed(0)} ms`],
            ['plain tesseract.js, 1 worker', `${pagesPerSecond(plainMs).toFixed(2)} pages/s (${plainChars} chars)`],
            [
              `service engine, ${workers} workers`,
              `${pagesPerSecond(engineMs).toFixed(2)} pages/s (${engineChars} chars)`,
            ],
          ],
        },
      ],
      notes: [`${images.length} scanned pages; both recognisers warmed on one page first; worker start-up not timed.`],
    };
  },
};
