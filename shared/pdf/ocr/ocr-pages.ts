import { normalisePageText } from '../normalise.ts';
import { judgePageText, type TextVerdict } from '../text-quality.ts';
import { renderPagesBounded, type RenderLimits } from './bounded-render.ts';
import type { KeptImage } from './render.ts';
import type { OcrEngine } from './engine.ts';
import { layoutOfWords, type PageLayout } from '../positions.ts';
import { logger } from '../../observability/logger.ts';

// Pages → recognised text: pages are drawn one at a time in the bounded pdf.js child
// (bounded-render.ts) while the engine's worker threads recognise the ones already drawn; at most
// two images per worker wait, so memory stays bounded whatever the page count. A page that draws
// nothing is never sent to the engine (docs/DECISIONS.md, OCR bounds). The recognised text goes
// through the same quality check and normalisation as a text layer: OCR that reads noise is not
// text either.

interface OcrPage {
  page: number;
  /** Normalised text ('' when nothing usable was recognised). */
  text: string;
  verdict: TextVerdict;
  confidence: number;
  /** False for a page that was not recognised: it draws nothing, or could not be drawn. */
  recognised: boolean;
  /** Where the text is drawn (from the engine's word boxes). */
  layout?: PageLayout;
}

interface OcrPagesOptions {
  dpi: number;
  limits: RenderLimits;
  /** Checked before each page is drawn: OCR stops with this error when it returns one. */
  shouldStop?: () => Error | undefined;
  /**
   * Pages holding an image of at least `minImagePixels` are also drawn as a PNG at `dpi` and
   * handed to `put` (awaited before the next page is drawn), for the page a reader opens.
   */
  keep?: KeptImage & {
    put: (page: { page: number; png: Uint8Array; widthPt: number; heightPt: number }) => Promise<void>;
  };
  /** Called once the drawing child is gone, with its peak resident size. */
  onStats?: (stats: { childPeakRssMb?: number }) => void;
}

export async function ocrPages(
  source: string | Uint8Array,
  pages: number[],
  engine: OcrEngine,
  options: OcrPagesOptions,
): Promise<OcrPage[]> {
  const results: OcrPage[] = [];
  const inFlight = new Set<Promise<void>>();
  const limit = engine.workers * 2;
  let failure: unknown;
  try {
    await renderPagesBounded(source, pages, {
      dpi: options.dpi,
      limits: options.limits,
      onStats: options.onStats,
      keep: options.keep && { dpi: options.keep.dpi, minImagePixels: options.keep.minImagePixels },
      onPage: async (drawn) => {
        if (failure) throw failure;
        const png = drawn.image?.png;
        if (png && options.keep)
          await options.keep.put({
            page: drawn.page,
            png,
            widthPt: drawn.image!.widthPt ?? 0,
            heightPt: drawn.image!.heightPt ?? 0,
          });
        if (!drawn.image) {
          if (drawn.skipped === 'unreadable') logger.warn('page not drawn', { page: drawn.page, reason: drawn.reason });
          const verdict: TextVerdict =
            drawn.skipped === 'empty' ? { usable: false, reason: 'empty' } : { usable: false, reason: 'undrawable' };
          results.push({ page: drawn.page, text: '', verdict, confidence: 0, recognised: false });
          return;
        }
        const stop = options.shouldStop?.();
        if (stop) throw stop;
        const job = engine.recognise(drawn.image.pgm).then(
          ({ text, confidence, words }) => {
            const verdict = judgePageText(text);
            const normalised = verdict.usable ? normalisePageText(text) : '';
            const image = drawn.image;
            results.push({
              page: drawn.page,
              text: normalised,
              verdict,
              confidence,
              recognised: true,
              layout: layoutOfWords(
                text,
                words,
                image,
                { width: image.widthPt ?? 0, height: image.heightPt ?? 0 },
                normalised,
              ),
            });
          },
          (err: unknown) => {
            failure ??= err;
          },
        );
        const tracked: Promise<void> = job.finally(() => inFlight.delete(tracked));
        inFlight.add(tracked);
        while (inFlight.size >= limit) await Promise.race(inFlight);
      },
    });
  } finally {
    await Promise.allSettled(inFlight); // never leave recognitions running past the call
  }
  if (failure) throw failure;
  return results.sort((a, b) => a.page - b.page);
}
