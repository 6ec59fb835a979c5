import { runBoundedChild, type ChildLimits } from '../bounded-child.ts';
import type { KeptImage, RenderedPage } from './render.ts';
import { imageBudgetFor } from './image-budget.ts';

// Pages drawn for OCR (and any later use of page images) in the bounded pdf.js child
// (bounded-child.ts, docs/DECISIONS.md, OCR bounds): a page holding an image that costs more than
// the child's resident size affords is not drawn (unreadable, before anything is decoded; its
// neighbours are drawn), each page has its time budget (from the request to its image), the whole
// range its document budget, the child its heap and resident size; past any of these the typed
// failure TOO_COMPLEX. Pages are asked for one at a time, when the caller is
// ready for the next, so no more than one page's pixels wait in the pipe.

export interface RenderLimits extends ChildLimits {
  /** Largest image (width × height) a page may hold, below what the resident size affords (OCR_MAX_IMAGE_PIXELS). */
  maxImagePixels?: number;
}

/** One page's outcome: its image, or why there is none (nothing drawn, or it could not be drawn). */
export type DrawnPage =
  | { page: number; image: RenderedPage }
  | { page: number; image?: undefined; skipped: 'empty' }
  | { page: number; image?: undefined; skipped: 'unreadable'; reason: string };

interface BoundedRenderOptions {
  dpi: number;
  /** pgm for OCR (the default); png for a page shown to a reader. */
  format?: 'pgm' | 'png';
  /** Pages holding a large image also drawn as PNG for readers (render.ts). */
  keep?: KeptImage;
  limits: RenderLimits;
  /** Called with each page in turn (awaited before the next is asked for). */
  onPage: (page: DrawnPage) => void | Promise<void>;
  /** Called once the child is gone, with its peak resident size (for the benchmark). */
  onStats?: (stats: { childPeakRssMb?: number }) => void;
}

/**
 * Draws the given pages (1-based) of `source` (the path of a PDF file, the caller's to remove, or a
 * small PDF's bytes) in a bounded child; rejects with TOO_COMPLEX past a limit.
 */
export async function renderPagesBounded(
  source: string | Uint8Array,
  pages: number[],
  options: BoundedRenderOptions,
): Promise<void> {
  const { limits } = options;
  const wanted = pages.slice();
  let documentPages = 0;
  await runBoundedChild<void>(
    {
      kind: 'render',
      source,
      dpi: options.dpi,
      imageBudget: imageBudgetFor(limits.rssMb, limits.maxImagePixels),
      format: options.format,
      keep: options.keep,
    },
    {
      limits,
      task: { verb: 'drawing', name: 'drawing the pages' },
      onStats: options.onStats,
      onMessage: (m, session) => {
        const next = () => {
          const page = wanted.shift();
          if (page === undefined) {
            session.answered();
            session.request({ type: 'close' });
            session.finish(undefined);
            return;
          }
          // A page the document does not have draws nothing.
          if (page < 1 || page > documentPages) {
            void Promise.resolve(options.onPage({ page, skipped: 'empty' })).then(next, session.finish);
            return;
          }
          session.armPageTimer();
          session.request({ type: 'draw', page });
        };
        const deliver = (page: DrawnPage) => {
          session.clearPageTimer();
          Promise.resolve(options.onPage(page)).then(next, session.finish);
        };
        switch (m.type) {
          case 'ready':
            documentPages = m.pages;
            next();
            break;
          case 'image': {
            const { type: _, ...image } = m;
            deliver({ page: m.page, image });
            break;
          }
          case 'empty':
            deliver({ page: m.page, skipped: 'empty' });
            break;
          case 'unreadable':
            deliver({ page: m.page, skipped: 'unreadable', reason: m.message });
            break;
          default:
            session.finish(new Error(`unexpected message from the drawing child: ${m.type}`));
        }
      },
    },
  );
}
