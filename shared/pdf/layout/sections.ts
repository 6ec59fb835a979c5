import { normalizeText } from '../../sentences.ts';
import type { Line } from './lines.ts';

// Headings and the section path a chunk sits under ("2 Methods > 2.1 Data").
//
// A heading is a short line (no sentence end) set larger than the page's body text, or set at
// body size wholly in another font than the body's and followed closely by body text. pdf.js's
// text content says nothing of weight (its `styles` give only a generic family, ascent and
// descent; the font's own name is known only after drawing the page, which costs another parse),
// so "another font" stands for bold (docs/DECISIONS.md, Tables and sections).
// Levels come from numbering ("2.1" sits under "2") where both headings are numbered, else from
// size: a heading closes every open heading of its size or smaller.

/** A heading as found on a page: its text and what ranks it. */
export interface Heading {
  text: string;
  size: number;
  /** At body size in another font (bold, most often), rather than larger. */
  styled: boolean;
}

/** Larger than body text by this factor: a heading by size. */
const LARGER = 1.15;
const MAX_HEADING_WORDS = 12;
const MAX_HEADING_CHARS = 120;
/** A styled heading sits at most this many body sizes above the line that follows it. */
const STYLED_MAX_GAP = 2.5;

/** The size and the font most of a page's characters are set in. */
export function bodyStyle(lines: readonly Line[]): { size: number; font?: string } {
  const bySize = new Map<number, number>();
  const byFont = new Map<string, number>();
  for (const line of lines) {
    const size = Math.round(line.size * 2) / 2;
    bySize.set(size, (bySize.get(size) ?? 0) + line.chars);
    if (line.font) byFont.set(line.font, (byFont.get(line.font) ?? 0) + line.chars);
  }
  const top = <K>(m: Map<K, number>) => [...m].sort((a, b) => b[1] - a[1])[0]?.[0];
  return { size: top(bySize) ?? 0, font: top(byFont) };
}

/** The line as a heading, or undefined when it is not one. */
export function headingAt(
  lines: readonly Line[],
  at: number,
  body: { size: number; font?: string },
): Heading | undefined {
  const line = lines[at]!;
  if (!body.size || !line.chars || line.chars > MAX_HEADING_CHARS) return undefined;
  // The cheap tests first: most lines are body text.
  const larger = line.size >= body.size * LARGER;
  if (!larger && (!line.font || !body.font || line.font === body.font || line.size < body.size * 0.95))
    return undefined;
  const text = normalizeText(line.text);
  if (!/\p{L}/u.test(text) || /[.,;]$/.test(text) || text.split(' ').length > MAX_HEADING_WORDS) return undefined;
  if (larger) return { text, size: line.size, styled: false };
  const next = lines[at + 1];
  if (!next || next.font !== body.font || Math.abs(next.size - body.size) > body.size * 0.1) return undefined;
  if (line.y === undefined || next.y === undefined) return undefined;
  const gap = line.y - next.y;
  if (gap <= 0 || gap > body.size * STYLED_MAX_GAP) return undefined;
  return { text, size: line.size, styled: true };
}

/** "2.1 Data" → [2, 1]; unnumbered → undefined. */
function numbering(text: string): number[] | undefined {
  const m = /^(\d{1,3}(?:\.\d{1,3})*)\.?\s+\S/.exec(text);
  return m ? m[1]!.split('.').map(Number) : undefined;
}

interface OpenHeading extends Heading {
  number?: number[];
}

/** Open headings deeper than this are not tracked. */
const MAX_DEPTH = 6;
/** A path longer than this is cut (it is stored with every chunk). */
const MAX_PATH_CHARS = 300;

/** The headings open at a point of the document, outermost first. */
export class SectionPath {
  private open: OpenHeading[] = [];

  /** Enters a heading: it closes those it does not sit under. */
  enter(heading: Heading): void {
    const entered: OpenHeading = { ...heading, number: numbering(heading.text) };
    while (this.open.length && !sitsUnder(entered, this.open.at(-1)!)) this.open.pop();
    if (this.open.length < MAX_DEPTH) this.open.push(entered);
  }

  /** "2 Methods > 2.1 Data", or undefined before the first heading. */
  get current(): string | undefined {
    if (!this.open.length) return undefined;
    const path = this.open.map((h) => h.text).join(' > ');
    return path.length > MAX_PATH_CHARS ? `${path.slice(0, MAX_PATH_CHARS - 1)}…` : path;
  }
}

function sitsUnder(heading: OpenHeading, parent: OpenHeading): boolean {
  if (heading.number && parent.number)
    return parent.number.length < heading.number.length && parent.number.every((n, i) => heading.number![i] === n);
  if (Math.abs(parent.size - heading.size) > 0.5) return parent.size > heading.size;
  // Same size: a heading set larger than body text holds the styled ones of that size.
  return !parent.styled && heading.styled;
}
