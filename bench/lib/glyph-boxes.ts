import { loadPdfjs, standardFontsDir } from '../../shared/pdf/extract.ts';

// The eval's own ground truth for a quote's boxes, computed apart from the service: the quote's
// characters found in the text items pdf.js gives for the page, and a box for each glyph. pdf.js
// gives an item's start (its transform) and its advance (width), not each glyph's: a glyph's
// place along the item is its share of the advance (characters of equal width), so a glyph's box
// is an estimate good to about a character; the coverage test below allows for that.

/** A rectangle in fractions of the page, origin top-left (as sources' `boxes`). */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

interface TextItem {
  str: string;
  transform: number[];
  width: number;
}

interface Glyph {
  /** The character compared (letters and digits only, lower case, NFKC). */
  char: string;
  item: number;
  index: number;
}

interface PageLayout {
  items: TextItem[];
  glyphs: Glyph[];
  keys: string;
  toFraction: (x: number, y: number) => [number, number];
}

/** Letters and digits only: a quote matches its page whatever the spacing, hyphens, quotes or ligatures. */
const comparable = (text: string) =>
  text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, '');

/** The pages of one PDF as pdf.js lays their text out, read once. */
export class PdfLayout {
  private readonly pages = new Map<number, Promise<PageLayout>>();
  private task: Promise<{ promise: Promise<any>; destroy(): Promise<void> }> | undefined;

  constructor(private readonly bytes: Uint8Array) {}

  /** The loading task (pdfjs-dist 6 releases a document through it). */
  private loading() {
    this.task ??= (async () => {
      const pdfjs = await loadPdfjs();
      return pdfjs.getDocument({
        data: this.bytes.slice(),
        disableFontFace: true,
        useSystemFonts: false,
        standardFontDataUrl: standardFontsDir(),
        verbosity: pdfjs.VerbosityLevel.ERRORS,
      });
    })();
    return this.task;
  }

  private page(n: number): Promise<PageLayout> {
    let layout = this.pages.get(n);
    if (!layout) {
      layout = (async () => {
        const page = await (await (await this.loading()).promise).getPage(n);
        const viewport = page.getViewport({ scale: 1 });
        const content = await page.getTextContent();
        const items = (content.items as TextItem[]).filter((i) => 'str' in i);
        const glyphs: Glyph[] = [];
        for (const [item, { str }] of items.entries())
          for (const [index, ch] of [...str].entries())
            for (const char of comparable(ch)) glyphs.push({ char, item, index });
        const toFraction = (x: number, y: number): [number, number] => {
          const [vx, vy] = viewport.convertToViewportPoint(x, y) as [number, number];
          return [vx / viewport.width, vy / viewport.height];
        };
        return { items, glyphs, keys: glyphs.map((g) => g.char).join(''), toFraction };
      })();
      this.pages.set(n, layout);
    }
    return layout;
  }

  /**
   * The boxes of the quote's glyphs on page `n` (one per character compared), or undefined when
   * the quote's letters and digits do not occur on the page's text items.
   */
  async quoteGlyphs(n: number, quote: string): Promise<Box[] | undefined> {
    const layout = await this.page(n);
    const wanted = comparable(quote);
    const at = wanted ? layout.keys.indexOf(wanted) : -1;
    if (at < 0) return undefined;
    return layout.glyphs.slice(at, at + wanted.length).map((g) => glyphBox(layout, g));
  }

  async close() {
    if (this.task) await (await this.task).destroy();
  }
}

/** A glyph's box: its share of its item's advance, from a fifth of the font size below the baseline to 0.8 above. */
function glyphBox(layout: PageLayout, g: Glyph): Box {
  const item = layout.items[g.item]!;
  const [a, b, c, d, e, f] = item.transform as [number, number, number, number, number, number];
  const along = Math.hypot(a, b) || 1;
  const size = Math.hypot(c, d) || along;
  const [ux, uy] = [a / along, b / along];
  const [vx, vy] = [c / size, d / size];
  const count = [...item.str].length || 1;
  const from = (item.width * g.index) / count;
  const to = (item.width * (g.index + 1)) / count;
  const corners = [
    [from, -0.2 * size],
    [to, -0.2 * size],
    [from, 0.8 * size],
    [to, 0.8 * size],
  ].map(([s, t]) => layout.toFraction(e + ux * s! + vx * t!, f + uy * s! + vy * t!));
  const xs = corners.map(([x]) => x);
  const ys = corners.map(([, y]) => y);
  const x = Math.min(...xs);
  const y = Math.min(...ys);
  return { x, y, width: Math.max(...xs) - x, height: Math.max(...ys) - y };
}

const area = (b: Box) => Math.max(0, b.width) * Math.max(0, b.height);

export interface Coverage {
  /** Share of the quote's glyphs whose centre lies in one of the boxes (allowing half a glyph each way). */
  covered: number;
  /**
   * The boxes' total area over the area of the quote's lines (each line from its first glyph to its
   * last, gaps between words and table cells included): a box over the whole page would be large.
   */
  areaRatio: number;
}

/** The quote's lines: glyphs whose centres are within half a glyph's height of each other, each line's extent. */
export function lineExtents(glyphs: Box[]): Box[] {
  const lines: { centre: number; glyphs: Box[] }[] = [];
  for (const g of glyphs) {
    const centre = g.y + g.height / 2;
    const line = lines.find((l) => Math.abs(l.centre - centre) < g.height / 2);
    if (line) line.glyphs.push(g);
    else lines.push({ centre, glyphs: [g] });
  }
  return lines.map((l) => {
    const x = Math.min(...l.glyphs.map((g) => g.x));
    const y = Math.min(...l.glyphs.map((g) => g.y));
    return {
      x,
      y,
      width: Math.max(...l.glyphs.map((g) => g.x + g.width)) - x,
      height: Math.max(...l.glyphs.map((g) => g.y + g.height)) - y,
    };
  });
}

/** How well `boxes` (a source's) cover `glyphs` (the eval's ground truth). */
export function coverage(boxes: Box[], glyphs: Box[]): Coverage {
  const inside = (g: Box) => {
    const cx = g.x + g.width / 2;
    const cy = g.y + g.height / 2;
    return boxes.some(
      (b) =>
        cx >= b.x - g.width / 2 &&
        cx <= b.x + b.width + g.width / 2 &&
        cy >= b.y - g.height / 4 &&
        cy <= b.y + b.height + g.height / 4,
    );
  };
  const linesArea = lineExtents(glyphs).reduce((n, l) => n + area(l), 0);
  return {
    covered: glyphs.length ? glyphs.filter(inside).length / glyphs.length : 0,
    areaRatio: linesArea ? boxes.reduce((n, b) => n + area(b), 0) / linesArea : Number.POSITIVE_INFINITY,
  };
}

/** Boxes are accurate when they cover every glyph of the quote and are not much larger than its lines. */
export const AREA_RATIO_MAX = 3;
export const accurate = (c: Coverage) => c.covered === 1 && c.areaRatio <= AREA_RATIO_MAX;
