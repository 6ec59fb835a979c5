import { PAGES_PER_BLOCK } from '../files/storage.ts';

// How a long document is split for reading in ranges at once (docs/DECISIONS.md "Extraction in
// ranges of pages"): as few ranges as `rangePages` allows, of equal length so that no range is
// left to finish alone, each a whole number of page-text blocks (no two ranges write one block).

/** A stretch of the document's pages, first and last included (1-based). */
export interface PageRange {
  first: number;
  last: number;
}

/** The ranges a document of `pages` pages is read in; one range when it fits in `rangePages`. */
export function planRanges(pages: number, rangePages: number): PageRange[] {
  const count = Math.max(1, Math.ceil(pages / rangePages));
  const size = Math.ceil(pages / count / PAGES_PER_BLOCK) * PAGES_PER_BLOCK;
  const ranges: PageRange[] = [];
  for (let first = 1; first <= pages; first += size) ranges.push({ first, last: Math.min(first + size - 1, pages) });
  return ranges.length ? ranges : [{ first: 1, last: pages }];
}
