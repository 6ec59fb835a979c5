// The lines of a page as pdf.js gives them (a line ends at an item with hasEOL, as in
// normalise.ts joinItems), each with the indices of its items, its font size and fonts, and its
// segments: runs of items separated by a horizontal gap wider than a word space, the cells a
// table is recognised from (tables.ts).

/** What layout needs of a pdf.js text item (TextItem). */
export interface LayoutItem {
  str: string;
  dir?: string;
  /** [a, b, c, d, e, f]: e and f are the item's origin on the page. */
  transform?: number[];
  width?: number;
  height?: number;
  fontName?: string;
  hasEOL?: boolean;
}

/** A run of text on a line, with the indices (in the page's item list) of the items it came from. */
export interface Segment {
  text: string;
  items: number[];
  /** Left and right edges on the page (PDF units). */
  x0: number;
  x1: number;
}

export interface Line {
  /** The line's items are [from, to) in the page's item list, whitespace items included. */
  from: number;
  to: number;
  /** The line's text as pdf.js joins it (items' strings, in drawing order). */
  text: string;
  /** Baseline (PDF units, up) of the line's first inked item. */
  y?: number;
  /** Largest font size of the line's non-blank items. */
  size: number;
  /** The font of the line's non-blank items when there is one only, else undefined. */
  font?: string;
  /** Characters of non-blank text. */
  chars: number;
  /**
   * Runs of items separated by gaps wider than a word space, left to right; empty when the line
   * has a single inked item (it cannot be a table row) or positions are missing.
   */
  segments: Segment[];
}

/** Indices of a line's items. */
export const lineItems = (line: Line) => Array.from({ length: line.to - line.from }, (_, k) => line.from + k);

/** A gap wider than this many font sizes separates two cells (a word space is about a third). */
const CELL_GAP = 1;

const sizeOf = (item: LayoutItem) => Math.abs(item.transform?.[3] ?? 0) || Math.abs(item.height ?? 0);

/** The page's items as lines. */
export function pageLines(items: readonly LayoutItem[]): Line[] {
  const lines: Line[] = [];
  let start = 0;
  for (let i = 0; i < items.length; i++) {
    if (items[i]!.hasEOL || i === items.length - 1) {
      lines.push(lineOf(items, start, i + 1));
      start = i + 1;
    }
  }
  return lines;
}

function lineOf(items: readonly LayoutItem[], from: number, to: number): Line {
  let text = '';
  let size = 0;
  let chars = 0;
  let inked = 0;
  let font: string | undefined;
  let fonts = 0;
  let y: number | undefined;
  // Segments need positions, and left-to-right drawing (right-to-left lines are never table rows).
  let positioned = true;
  for (let i = from; i < to; i++) {
    const item = items[i]!;
    text += item.str;
    if (!item.transform || item.dir === 'rtl') positioned = false;
    if (!item.str.trim()) continue;
    inked++;
    chars += item.str.length;
    y ??= item.transform?.[5];
    size = Math.max(size, sizeOf(item));
    if (item.fontName !== font) {
      fonts += font === undefined ? 1 : 2;
      font ??= item.fontName;
    }
  }
  return {
    from,
    to,
    text,
    y,
    size,
    font: fonts === 1 ? font : undefined,
    chars,
    segments: positioned && inked > 1 ? segmentsOf(items, from, to, size) : [],
  };
}

/** Left-to-right runs of a line's items, split where the gap between two inked items exceeds CELL_GAP sizes. */
function segmentsOf(items: readonly LayoutItem[], from: number, to: number, size: number): Segment[] {
  const segments: Segment[] = [];
  let current: Segment | undefined;
  for (let i = from; i < to; i++) {
    const item = items[i]!;
    const x0 = item.transform![4]!;
    const x1 = x0 + (item.width ?? 0);
    if (!item.str.trim()) {
      if (current) {
        current.text += item.str;
        current.items.push(i);
      }
      continue;
    }
    // Drawing order that goes back to the left (a second column drawn line by line, right to left
    // text) or a wide gap starts a new segment.
    if (current && x0 >= current.x1 - size * 0.5 && x0 - current.x1 <= size * CELL_GAP) {
      // pdf.js leaves some word spaces as gaps between items: a gap wider than a thin space is one.
      if (x0 - current.x1 > size * 0.15 && !/\s$/.test(current.text)) current.text += ' ';
      current.text += item.str;
      current.items.push(i);
      current.x1 = Math.max(current.x1, x1);
      continue;
    }
    if (current) trimTrailingBlanks(current, items);
    current = { text: item.str, items: [i], x0, x1 };
    segments.push(current);
  }
  if (current) trimTrailingBlanks(current, items);
  for (const s of segments) s.text = s.text.replace(/\s+/g, ' ').trim();
  return segments;
}

/** Whitespace items after a segment's last inked item belong to the gap, not to the cell. */
function trimTrailingBlanks(segment: Segment, items: readonly LayoutItem[]) {
  while (segment.items.length > 1 && !items[segment.items.at(-1)!]!.str.trim()) segment.items.pop();
}
