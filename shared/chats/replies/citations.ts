// Citations a client can check: a file-chat reply cites its passages as [n] (n counts from 1 in
// the order of `sources`; [1, 3] cites two). A marker is any bracketed list of numbers, spaces
// allowed inside ([ 2 ], [1000], [1,2]); one that names no returned source is removed (a number
// that is not a source keeps its marker only if another number in it is one, and the marker is
// written back as [a, b]), and the sources a reply cites are the ones flagged `cited`. A marker
// must not follow a letter or digit, so code such as `items[0]` is left alone, nor sit inside an
// unclosed bracket of numbers (in `[0,[9]2]`, removing `[9]` would join the rest into an
// unchecked marker). A bracket of more than MAX_MARKER_CHARS is not a marker (so a streamed
// reply never holds back more than that), and whole and streamed replies apply the same rule, so
// both read the same. Only a verified source (its quote occurs on its page) is citable: a marker
// naming an unverified one is treated like one naming no source.

const MAX_MARKER_CHARS = 200;
const MARKER = /\[(\s*\d+(?:\s*,\s*\d+)*\s*)\]/gu;
const WORD_END = /[\p{L}\p{N}_]$/u;
/** Whether `text` ends inside an unclosed bracket of numbers (`[0,[9]2]`: `[9]` is no citation). */
function endsInOpenRun(text: string): boolean {
  const open = text.lastIndexOf('[');
  return open >= 0 && /^[\d,\s]*$/u.test(text.slice(open + 1));
}
/** The tail of a text that may be the start of a marker still being streamed. */
const OPEN_MARKER = /(?<![\p{L}\p{N}_])\[[\d,\s]*$/u;

/**
 * The sources a marker may name: a count (1..n all citable), or for each source (in order) whether
 * it is citable.
 */
export type Citable = number | readonly boolean[];

const isCitable = (citable: Citable, n: number) =>
  typeof citable === 'number' ? n >= 1 && n <= citable : citable[n - 1] === true;

/** Whether each source may be cited: the verified ones. */
export const citableSources = (sources: readonly { verified?: boolean }[]): boolean[] =>
  sources.map((s) => s.verified === true);

/**
 * Removes the markers that name no citable source; adds the cited numbers to `cited`.
 * `before` ends the text already sent ahead of this one (what precedes a marker at the start:
 * a word, or an unclosed bracket of numbers, makes it none).
 */
function checkMarkers(text: string, citable: Citable, cited: Set<number>, before = ''): string {
  return text.replace(MARKER, (whole: string, list: string, at: number) => {
    const preceding = (before + text.slice(Math.max(0, at - MAX_MARKER_CHARS), at)).slice(-MAX_MARKER_CHARS);
    if (whole.length > MAX_MARKER_CHARS || WORD_END.test(preceding) || endsInOpenRun(preceding)) return whole;
    const valid = [...new Set(list.split(',').map((n) => Number(n.trim())))].filter((n) => isCitable(citable, n));
    if (!valid.length) return '';
    for (const n of valid) cited.add(n);
    return `[${valid.join(', ')}]`;
  });
}

/** A whole reply: the text with only valid markers, and the 1-based numbers it cites. */
export function checkCitations(text: string, citable: Citable): { text: string; cited: Set<number> } {
  const cited = new Set<number>();
  return { text: checkMarkers(text, citable, cited), cited };
}

/**
 * The same for a streamed reply: deltas in, checked text out. A marker split across deltas
 * ("[" then "2]") is held back until it closes (or clearly is not a marker), so what a client
 * receives never carries a marker that will turn out to be invalid.
 */
export class CitationStream {
  readonly cited = new Set<number>();
  private held = '';
  private sent = '';

  constructor(private readonly citable: Citable) {}

  /** The text that can be sent now (may be empty). */
  push(delta: string): string {
    const text = this.held + delta;
    const open = OPEN_MARKER.exec(this.sent.slice(-1) + text);
    const at = open ? open.index - Math.min(1, this.sent.length) : -1;
    if (open && at >= 0 && text.length - at <= MAX_MARKER_CHARS) {
      this.held = text.slice(at);
      return this.send(text.slice(0, at));
    }
    this.held = '';
    return this.send(text);
  }

  /** Whatever is still held (at the end of the reply). */
  end(): string {
    const rest = this.held;
    this.held = '';
    return this.send(rest);
  }

  private send(text: string): string {
    const out = checkMarkers(text, this.citable, this.cited, this.sent);
    if (out) this.sent = (this.sent + out).slice(-MAX_MARKER_CHARS);
    return out;
  }
}
