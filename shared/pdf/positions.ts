import { joinLine, normalisePageText } from './normalise.ts';
import { SCALE, SPAN_FIELDS, type Box } from '../retrieval/quote-boxes.ts';

export { SPAN_FIELDS, type Box };

// Where a page's normalised text is drawn (docs/DECISIONS.md "Citation positions"). The page text
// is built from pieces (pdf.js text items, or the OCR engine's words), each with its box on the
// page; normalisation (NFKC, controls, hyphenation, whitespace) is replayed here keeping, for every
// character of the normalised text, the piece it came from. The result is a page's spans: for each
// piece, the range of normalised text it produced and its box (fractions of the page, origin
// top-left). A quote's boxes are the spans it overlaps, a span it starts or ends inside cut in
// proportion to its characters, one box per line.

/** Spans of a page's text: flat `[start, end, x, y, width, height]` per piece, starts ascending (fractions × SCALE). */
export type PageSpans = number[];

/** One line of raw text, as joined, with the piece each character came from (-1: none, a joining space or newline). */
export interface RawText {
  text: string;
  origins: Int32Array;
}

/** Raw text from its pieces in order: `str` of each, `separator` (a newline, a space) between the ones that ask for it. */
export function rawFromPieces(pieces: readonly { str: string; after?: string }[]): RawText {
  let text = '';
  const origins: number[] = [];
  pieces.forEach((piece, i) => {
    text += piece.str;
    for (let k = 0; k < piece.str.length; k++) origins.push(i);
    if (piece.after) {
      text += piece.after;
      for (let k = 0; k < piece.after.length; k++) origins.push(-1);
    }
  });
  return { text, origins: Int32Array.from(origins) };
}

const COMBINING = /\p{M}/u;
// As normalise.ts's normalisePageText, step by step.
const HYPHEN_BREAK = /(\p{Ll})-\n(?=\p{Ll})/gu;

/** normalise.ts's control characters (C0/C1 but whitespace, U+FFFE, U+FFFF). */
const isControl = (c: number) =>
  c <= 0x08 || c === 0x0b || c === 0x0c || (c >= 0x0e && c <= 0x1f) || (c >= 0x7f && c <= 0x9f) || c >= 0xfffe;
/** What `[\s\u00a0]` matches. */
const isSpace = (c: number) =>
  c === 0x20 ||
  (c >= 0x09 && c <= 0x0d) ||
  c === 0xa0 ||
  c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000 ||
  c === 0xfeff;

/** NFKC with origins: one call when it changes nothing (most pages), else cluster by cluster (a character and its marks). */
function nfkcWithOrigins(raw: RawText): RawText {
  const whole = raw.text.normalize('NFKC');
  if (whole === raw.text) return raw;
  let text = '';
  const origins: number[] = [];
  const chars = Array.from(raw.text);
  let unit = 0;
  for (let i = 0; i < chars.length; ) {
    let cluster = chars[i]!;
    const origin = raw.origins[unit]!;
    let j = i + 1;
    while (j < chars.length && COMBINING.test(chars[j]!)) cluster += chars[j++]!;
    const out = cluster.normalize('NFKC');
    text += out;
    for (let k = 0; k < out.length; k++) origins.push(origin);
    unit += cluster.length;
    i = j;
  }
  return { text, origins: Int32Array.from(origins) };
}

/**
 * The normalised text of raw text with, for each of its UTF-16 units, the piece it came from; or
 * undefined when the replay does not give normalisePageText's text (`expected`, computed when not
 * given) exactly: then there are no positions.
 */
export function normaliseWithOrigins(raw: RawText, expected?: string): RawText | undefined {
  const nfkc = nfkcWithOrigins(raw);
  const s = nfkc.text;
  // A word hyphenated at a line end is joined: its hyphen and line break are dropped.
  const dropped = new Set<number>();
  if (s.includes('-\n'))
    for (const m of s.matchAll(HYPHEN_BREAK)) {
      const hyphen = m.index + m[1]!.length;
      dropped.add(hyphen);
      dropped.add(hyphen + 1);
    }
  // Controls are spaces, tatweel goes, whitespace runs become one space (from the run's first unit), trimmed.
  const codes = new Uint16Array(s.length);
  const origins = new Int32Array(s.length);
  let n = 0;
  let pendingSpace = -2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x0640 || (dropped.size && dropped.has(i))) continue;
    if (isSpace(c) || isControl(c)) {
      if (pendingSpace === -2) pendingSpace = nfkc.origins[i]!;
      continue;
    }
    if (pendingSpace !== -2 && n) {
      codes[n] = 0x20;
      origins[n++] = pendingSpace;
    }
    pendingSpace = -2;
    codes[n] = c;
    origins[n++] = nfkc.origins[i]!;
  }
  let text = '';
  for (let i = 0; i < n; i += 8192) text += String.fromCharCode(...codes.subarray(i, Math.min(n, i + 8192)));
  if (text !== (expected ?? normalisePageText(raw.text))) return undefined;
  return { text, origins: origins.slice(0, n) };
}

/**
 * A page's spans from its normalised text's origins and the pieces' boxes (undefined: a piece
 * without a box). A box of negative width is drawn right to left (its first character rightmost).
 */
export function spansOf(normalised: RawText, boxes: readonly (Box | undefined)[]): PageSpans {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  normalised.origins.forEach((piece, at) => {
    if (piece < 0 || normalised.text[at] === ' ') return;
    if (!first.has(piece)) first.set(piece, at);
    last.set(piece, at);
  });
  const spans: [number, number, Box][] = [];
  for (const [piece, start] of first) {
    const box = boxes[piece];
    if (box) spans.push([start, last.get(piece)! + 1, box]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  const flat: number[] = [];
  for (const [start, end, b] of spans)
    flat.push(start, end, ...[b.x, b.y, b.width, b.height].map((v) => Math.round(v * SCALE)));
  return flat;
}

/** The spans of a page that overlap [start, end) (for storing with a chunk the part of a page it covers). */
export function spansWithin(spans: PageSpans, start: number, end: number): number[] {
  const out: number[] = [];
  for (let i = 0; i + SPAN_FIELDS <= spans.length; i += SPAN_FIELDS) {
    if (spans[i + 1]! <= start || spans[i]! >= end) continue;
    for (let k = 0; k < SPAN_FIELDS; k++) out.push(spans[i + k]!);
  }
  return out;
}

/** What positions need of a pdf.js text item. */
interface PositionedItem {
  str: string;
  dir?: string;
  transform?: number[];
  width?: number;
  height?: number;
  hasEOL?: boolean;
}

/** The page's viewport at scale 1 (pdf.js PageViewport): its size and its user space → top-left mapping. */
export interface PageViewport {
  width: number;
  height: number;
  convertToViewportPoint(x: number, y: number): number[];
}

/** Glyphs reach this far below the baseline and above it, in font heights (pdf.js's text layer assumes an ascent of 0.8). */
const DESCENT = 0.2;
const ASCENT = 0.8;

/** The box an item's glyphs cover, as fractions of the page (undefined for an item without a place or size). */
export function itemBox(item: PositionedItem, viewport: PageViewport): Box | undefined {
  const t = item.transform;
  if (!t || t.length < 6 || !item.str.trim() || !(viewport.width > 0) || !(viewport.height > 0)) return undefined;
  const [a, b, c, d, e, f] = t as [number, number, number, number, number, number];
  const along = Math.hypot(a, b) || 1;
  const across = Math.hypot(c, d) || 1;
  const height = Math.abs(item.height || across);
  const width = item.width ?? 0;
  const xs: number[] = [];
  const ys: number[] = [];
  for (const s of [0, width])
    for (const h of [-DESCENT * height, ASCENT * height]) {
      const [px, py] = viewport.convertToViewportPoint(
        e + (a / along) * s + (c / across) * h,
        f + (b / along) * s + (d / across) * h,
      );
      xs.push(px! / viewport.width);
      ys.push(py! / viewport.height);
    }
  const x = Math.max(0, Math.min(...xs));
  const y = Math.max(0, Math.min(...ys));
  const box = { x, y, width: Math.min(1, Math.max(...xs)) - x, height: Math.min(1, Math.max(...ys)) - y };
  if (!(box.width > 0) || !(box.height > 0)) return undefined;
  // An item read right to left draws its first character rightmost.
  return item.dir === 'rtl' ? { ...box, width: -box.width } : box;
}

/**
 * The raw text of a page's items exactly as normalise.ts joins it (lines in logical order), with
 * each character's item. A line joined in item order maps one to one; a line put back in logical
 * order (right to left) maps each item to where its text occurs in the joined line.
 */
export function rawFromItems(items: readonly PositionedItem[]): RawText {
  let text = '';
  const origins: number[] = [];
  let line: number[] = [];
  const flush = (eol: boolean) => {
    const joined = joinLine(line.map((i) => items[i]!));
    const lineOrigins = new Array<number>(joined.length).fill(-1);
    if (joined === line.map((i) => items[i]!.str).join('')) {
      let at = 0;
      for (const i of line) for (let k = 0; k < items[i]!.str.length; k++) lineOrigins[at++] = i;
    } else {
      const claimed = new Array<boolean>(joined.length).fill(false);
      for (const i of line) {
        const str = items[i]!.str;
        if (!str) continue;
        let found = joined.indexOf(str);
        while (found >= 0 && claimed[found]) found = joined.indexOf(str, found + 1);
        if (found < 0) continue;
        for (let k = 0; k < str.length; k++) {
          claimed[found + k] = true;
          lineOrigins[found + k] = i;
        }
      }
    }
    text += joined;
    for (const origin of lineOrigins) origins.push(origin);
    if (eol) {
      text += '\n';
      origins.push(-1);
    }
    line = [];
  };
  items.forEach((item, i) => {
    line.push(i);
    if (item.hasEOL) flush(true);
  });
  flush(false);
  return { text, origins: Int32Array.from(origins) };
}

/** Where a page's text is drawn: its size in points and its spans (empty when the text cannot be mapped to the items). */
export interface PageLayout {
  width: number;
  height: number;
  spans: PageSpans;
}

/** The layout of a page's normalised `text` read from these items (pdf.js, in content order). */
export function layoutOfItems(items: readonly PositionedItem[], viewport: PageViewport, text: string): PageLayout {
  const size = { width: round2(viewport.width), height: round2(viewport.height) };
  if (!text) return { ...size, spans: [] };
  const boxes = items.map((item) => itemBox(item, viewport));
  const ranges = printableRanges(items, text);
  if (ranges) return { ...size, spans: spansFromRanges(ranges, boxes) };
  const normalised = normaliseWithOrigins(rawFromItems(items), text);
  if (!normalised) return { ...size, spans: [] };
  return { ...size, spans: spansOf(normalised, boxes) };
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * The fast path of most pages: every item printable ASCII (NFKC, controls and tatweel change
 * nothing) and in reading order, none ending a line with a hyphen. Then each item is its trimmed
 * text with spaces collapsed, found in turn in the page text with at most a space before it; each
 * item's range, or undefined when the page is not such a page (the exact replay handles it).
 */
function printableRanges(items: readonly PositionedItem[], text: string): ([number, number] | undefined)[] | undefined {
  const ranges: ([number, number] | undefined)[] = [];
  let cursor = 0;
  for (const item of items) {
    const str = item.str;
    if (!PRINTABLE_ASCII.test(str) || (item.hasEOL && str.trimEnd().endsWith('-'))) return undefined;
    const piece = str.includes('  ') ? str.trim().replace(/ {2,}/g, ' ') : str.trim();
    if (!piece) {
      ranges.push(undefined);
      continue;
    }
    let at = cursor;
    if (!text.startsWith(piece, at)) {
      if (text.charCodeAt(at) !== 0x20 || !text.startsWith(piece, at + 1)) return undefined;
      at++;
    }
    ranges.push([at, at + piece.length]);
    cursor = at + piece.length;
  }
  return cursor === text.length ? ranges : undefined;
}

function spansFromRanges(
  ranges: readonly ([number, number] | undefined)[],
  boxes: readonly (Box | undefined)[],
): PageSpans {
  const flat: number[] = [];
  ranges.forEach((range, i) => {
    const b = boxes[i];
    if (range && b) flat.push(range[0], range[1], ...[b.x, b.y, b.width, b.height].map((v) => Math.round(v * SCALE)));
  });
  return flat;
}

/** A recognised word: its text and its box in pixels of the image it was read from. */
export interface OcrWord {
  text: string;
  bbox: { x0: number; y0: number; x1: number; y1: number };
}

/**
 * The layout of a recognised page's normalised `text` from the engine's raw text and words (each
 * found in the raw text in turn), the image's size in pixels and the page's in points.
 */
export function layoutOfWords(
  raw: string,
  words: readonly OcrWord[],
  image: { width: number; height: number },
  page: { width: number; height: number },
  text: string,
): PageLayout {
  const size = { width: round2(page.width), height: round2(page.height) };
  if (!text || !(image.width > 0) || !(image.height > 0)) return { ...size, spans: [] };
  const origins = new Int32Array(raw.length).fill(-1);
  let from = 0;
  words.forEach((word, w) => {
    const at = word.text ? raw.indexOf(word.text, from) : -1;
    if (at < 0) return;
    origins.fill(w, at, at + word.text.length);
    from = at + word.text.length;
  });
  const normalised = normaliseWithOrigins({ text: raw, origins }, text);
  if (!normalised) return { ...size, spans: [] };
  const boxes = words.map(({ bbox }) => ({
    x: bbox.x0 / image.width,
    y: bbox.y0 / image.height,
    width: (bbox.x1 - bbox.x0) / image.width,
    height: (bbox.y1 - bbox.y0) / image.height,
  }));
  return { ...size, spans: spansOf(normalised, boxes) };
}

const round2 = (v: number) => Math.round(v * 100) / 100;
