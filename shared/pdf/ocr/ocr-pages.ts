import { normalisePageText } from '../normalise.ts';
import { judgePageText, type TextVerdict } from '../text-quality.ts';
import type { OcrEngine } from './engine.ts';
import { renderPages } from './render.ts';

// Pages → recognised text: pages are drawn one at a time on this thread while the engine's
// worker threads recognise the ones already drawn; at most two images per worker wait, so memory
// stays bounded whatever the page count. The recognised text goes through the same quality check
// and normalisation as a text layer: OCR that reads noise is not text either.

interface OcrPage {
  page: number;
  /** Normalised text ('' when nothing usable was recognised). */
  text: string;
  verdict: TextVerdict;
  confidence: number;
}

interface OcrPagesOptions {
  dpi: number;
  /** Checked before each page is drawn: OCR stops with this error when it returns one. */
  shouldStop?: () => Error | undefined;
}

export async function ocrPages(
  data: Uint8Array,
  pages: number[],
  engine: OcrEngine,
  options: OcrPagesOptions,
): Promise<OcrPage[]> {
  const results: OcrPage[] = [];
  const inFlight = new Set<Promise<void>>();
  const limit = engine.workers * 2;
  let failure: unknown;
  try {
    await renderPages(data, pages, { dpi: options.dpi }, async (image) => {
      if (failure) throw failure;
      const stop = options.shouldStop?.();
      if (stop) throw stop;
      const job = engine.recognise(image.pgm).then(
        ({ text, confidence }) => {
          const verdict = judgePageText(text);
          results.push({ page: image.page, text: verdict.usable ? normalisePageText(text) : '', verdict, confidence });
        },
        (err: unknown) => {
          failure ??= err;
        },
      );
      const tracked: Promise<void> = job.finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
      while (inFlight.size >= limit) await Promise.race(inFlight);
    });
  } finally {
    await Promise.allSettled(inFlight); // never leave recognitions running past the call
  }
  if (failure) throw failure;
  return results.sort((a, b) => a.page - b.page);
}
