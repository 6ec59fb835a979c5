import type { PageLayout } from './positions.ts';
import { runBoundedChild, type ChildLimits } from './bounded-child.ts';
import type { ContentLimits } from './content-budget.ts';
import type { ExtractResult } from './extract.ts';
import type { PageRange } from './page-ranges.ts';
import type { TextVerdict } from './text-quality.ts';
import type { PageBlock } from './layout/page-layout.ts';

// Text extraction with a bound on what one document may cost (docs/DECISIONS.md, Hostile
// documents): pdf.js reads the document in a bounded child process (bounded-child.ts), after a
// look at its streams (content-budget.ts). Every way the child can end without an answer is the
// typed failure TOO_COMPLEX. Pages come back one by one as they are read, so chunking and
// embedding still overlap with extraction.

export interface ExtractLimits extends ChildLimits {
  content: ContentLimits;
}

interface BoundedExtractOptions {
  maxPages: number;
  /** Read only these pages, or the first range of this many pages at most (page-ranges.ts); all when absent. */
  range?: PageRange;
  firstRangeOf?: number;
  /** Skip the content check: these bytes passed it already (a later range of a document). */
  contentChecked?: boolean;
  limits: ExtractLimits;
  /** Called with each page's normalised text ('' when unusable), its quality verdict, where it is drawn and its headings and tables if any, in page order (awaited, one at a time). */
  onPage: (
    page: number,
    text: string,
    verdict: TextVerdict,
    layout?: PageLayout,
    blocks?: PageBlock[],
  ) => void | Promise<void>;
  /** Called once with the document's page count, before the first page (awaited). */
  onDocument?: (pages: number) => void | Promise<void>;
  /** Called once the child is gone, with its peak resident size (for the benchmark). */
  onStats?: (stats: { childPeakRssMb?: number }) => void;
}

interface BoundedExtractResult extends ExtractResult {
  /** Peak resident size of the child (MB), where the platform reports it (Linux). */
  childPeakRssMb?: number;
}

/**
 * Reads the text of every page of `source` in a bounded child process: the path of a PDF file
 * (the caller's to remove; the child reads it in ranges), or a small PDF's bytes. Throws
 * PermanentFailure for documents that cannot be read (ENCRYPTED, NOT_PDF, TOO_MANY_PAGES, NO_TEXT_LAYER) or that exceed a
 * limit (TOO_COMPLEX); RetryableFailure when the child could not be started or failed for a
 * reason of its own; whatever onPage throws.
 */
export async function extractTextBounded(
  source: string | Uint8Array,
  options: BoundedExtractOptions,
): Promise<BoundedExtractResult> {
  const { limits } = options;
  let pages: Promise<void> = Promise.resolve();
  let peak: number | undefined;
  const result = await runBoundedChild<ExtractResult>(
    {
      kind: 'extract',
      source,
      maxPages: options.maxPages,
      range: options.range,
      firstRangeOf: options.firstRangeOf,
      content: limits.content,
      contentChecked: options.contentChecked,
    },
    {
      limits,
      task: { verb: 'reading', name: 'the text extraction' },
      onStats: (stats) => {
        peak = stats.childPeakRssMb;
        options.onStats?.(stats);
      },
      onMessage: (m, session) => {
        switch (m.type) {
          case 'ready':
            session.armPageTimer();
            pages = pages.then(() => options.onDocument?.(m.pages));
            pages.catch(session.finish);
            break;
          case 'page':
            session.armPageTimer();
            pages = pages.then(() => options.onPage(m.page, m.text, m.verdict, m.layout, m.blocks));
            pages.catch(session.finish);
            break;
          case 'done':
            session.answered();
            pages.then(() => session.finish(undefined, m.result), session.finish);
            break;
          default:
            session.finish(new Error(`unexpected message from the extraction child: ${m.type}`));
        }
      },
    },
  );
  return peak === undefined ? result : { ...result, childPeakRssMb: peak };
}
