// Where a quote is drawn on its page, from the spans stored with its chunk (shared/pdf/positions.ts
// makes them at ingestion): each span is a range of the page's text and the box of the piece
// (pdf.js text item, or recognised word) it came from. A span the quote starts or ends inside is
// cut in proportion to its characters; consecutive boxes on one line are merged.

/** A box on the page: fractions of the page's width and height, origin top-left. */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export const SPAN_FIELDS = 6;
/** Box coordinates are stored as integers: fractions of the page × SCALE. */
export const SCALE = 10_000;

/**
 * The boxes of the text [start, end) of a page from its spans (flat, as spansOf gives them, with
 * offsets in the same page text): spans cut where the range starts or ends inside them, then
 * consecutive boxes on the same line merged.
 */
export function boxesOf(spans: ArrayLike<number>, start: number, end: number): Box[] {
  const boxes: Box[] = [];
  for (let i = 0; i + SPAN_FIELDS <= spans.length; i += SPAN_FIELDS) {
    const s = spans[i]!;
    const e = spans[i + 1]!;
    if (e <= start || s >= end) continue;
    const from = (Math.max(start, s) - s) / (e - s);
    const to = (Math.min(end, e) - s) / (e - s);
    const x = spans[i + 2]! / SCALE;
    const width = spans[i + 4]! / SCALE;
    const w = Math.abs(width);
    // Right to left: the first characters are at the right end.
    const left = width >= 0 ? x + w * from : x + w * (1 - to);
    boxes.push({ x: left, y: spans[i + 3]! / SCALE, width: w * (to - from), height: spans[i + 5]! / SCALE });
  }
  const merged: Box[] = [];
  for (const box of boxes) {
    const prev = merged.at(-1);
    if (prev && sameLine(prev, box)) {
      const x = Math.min(prev.x, box.x);
      const y = Math.min(prev.y, box.y);
      prev.width = Math.max(prev.x + prev.width, box.x + box.width) - x;
      prev.height = Math.max(prev.y + prev.height, box.y + box.height) - y;
      prev.x = x;
      prev.y = y;
    } else merged.push({ ...box });
  }
  return merged.map(roundBox);
}

/** Two boxes overlap vertically by more than half the smaller one's height. */
function sameLine(a: Box, b: Box): boolean {
  const overlap = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return overlap > Math.min(a.height, b.height) / 2;
}

const round = (v: number) => Math.min(1, Math.max(0, Math.round(v * SCALE) / SCALE));
const roundBox = (b: Box): Box => ({ x: round(b.x), y: round(b.y), width: round(b.width), height: round(b.height) });
