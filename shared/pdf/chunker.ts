import type { Chunk } from '../files/chunk-repository.ts';
import { splitSentences } from '../sentences.ts';
import { SPAN_FIELDS, spansWithin, type PageLayout } from './positions.ts';

// Token-aware chunking: pages are cut into sentences, sentences are packed into
// chunks of at most `chunkTokens`, and each chunk starts with the last whole sentences of the
// previous one (up to `overlapTokens`), so a passage cut at a boundary is still found whole.
// A sentence longer than a chunk is cut between words (a word longer than a chunk, between
// characters). Chunks may span pages; `pageStarts` maps offsets in the chunk text to pages.
// Pages are pushed one at a time, so memory stays bounded by one chunk plus one page.
// Each chunk also says where its text is in its pages' texts (`runs`: stretches of the chunk that
// are verbatim stretches of one page's text) and carries the spans (positions.ts) those stretches
// cover, so a quote's offsets and boxes on its page need nothing else (docs/DECISIONS.md
// "Citation positions").

interface ChunkerOptions {
  chunkTokens: number;
  overlapTokens: number;
  countTokens: (text: string) => number;
  /** Index of the first chunk (OCR chunks are numbered after the text layer's). */
  firstIndex?: number;
}

const FIRST_UNIT_MARGIN = 4;

interface Unit {
  text: string;
  page: number;
  /** Tokens of the unit with the space that joins it to the previous one. */
  tokens: number;
  /** Where the unit starts in its page's text; -1 when it is not a verbatim stretch of it (a word cut in pieces). */
  pageStart: number;
  /** It follows the previous unit of its page in the page's text, one space between. */
  follows: boolean;
  layout?: PageLayout;
}

export class Chunker {
  private units: Unit[] = [];
  private used = 0;
  private next: number;
  private readonly overlap: number;

  /**
   * Units are counted with the space that joins them (the tokenizer never merges across a space
   * before a word, so these counts add up exactly), but a chunk's first unit has no such space,
   * which can change its count by a token or two: a small margin keeps chunks within limits.
   */
  private readonly budget: number;

  constructor(private readonly options: ChunkerOptions) {
    this.budget = Math.max(1, options.chunkTokens - FIRST_UNIT_MARGIN);
    this.next = options.firstIndex ?? 0;
    // The overlap must leave room for new text, or chunks would never advance.
    this.overlap = Math.min(options.overlapTokens, Math.floor(this.budget / 2));
  }

  /** Adds one page of normalised text (with where it is drawn, when known); the chunks it completed. */
  push(page: number, text: string, layout?: PageLayout): Chunk[] {
    const out: Chunk[] = [];
    let from = 0;
    let lastEnd = -2;
    for (const sentence of splitSentences(text)) {
      const at = text.indexOf(sentence, from);
      from = at + sentence.length;
      for (const unit of this.unitsOf(sentence, page, at)) {
        if (unit.pageStart >= 0 && !text.startsWith(unit.text, unit.pageStart)) unit.pageStart = -1;
        unit.follows = unit.pageStart >= 0 && unit.pageStart === lastEnd + 1 && text[lastEnd] === ' ';
        lastEnd = unit.pageStart >= 0 ? unit.pageStart + unit.text.length : -2;
        unit.layout = layout;
        this.add(unit, out);
      }
    }
    return out;
  }

  /** The last chunk, if any text is left. */
  finish(): Chunk[] {
    if (!this.units.length || this.onlyOverlap) return [];
    const chunk = this.emit();
    this.units = [];
    this.used = 0;
    return [chunk];
  }

  // True while the pending units are only the overlap copied from the last chunk.
  private onlyOverlap = false;

  private add(unit: Unit, out: Chunk[]): void {
    if (this.units.length && this.used + unit.tokens > this.budget) {
      if (!this.onlyOverlap) out.push(this.emit());
      this.carryOverlap(unit.tokens);
    }
    this.units.push(unit);
    this.used += unit.tokens;
    this.onlyOverlap = false;
  }

  /** Keeps the trailing sentences that fit in the overlap and leave room for `incoming`. */
  private carryOverlap(incoming: number): void {
    const kept: Unit[] = [];
    let tokens = 0;
    for (let i = this.units.length - 1; i >= 0; i--) {
      const u = this.units[i]!;
      if (tokens + u.tokens > this.overlap || tokens + u.tokens + incoming > this.budget) break;
      kept.unshift(u);
      tokens += u.tokens;
    }
    this.units = kept;
    this.used = tokens;
    this.onlyOverlap = kept.length > 0;
  }

  private emit(): Chunk {
    let text = '';
    const pageStarts: [number, number][] = [];
    const runs: [number, number, number, number][] = [];
    let previous: Unit | undefined;
    for (const u of this.units) {
      if (text) text += ' ';
      if (pageStarts.at(-1)?.[1] !== u.page) pageStarts.push([text.length, u.page]);
      const run = runs.at(-1);
      if (u.pageStart >= 0) {
        if (run && previous?.page === u.page && previous.pageStart >= 0 && u.follows)
          run[1] = text.length + u.text.length - run[0];
        else runs.push([text.length, u.text.length, u.page, u.pageStart]);
      }
      text += u.text;
      previous = u;
    }
    return {
      index: this.next++,
      text,
      page: this.units[0]!.page,
      pageEnd: this.units.at(-1)!.page,
      pageStarts,
      runs,
      spans: this.spansOf(runs),
      // Exact: the first unit counted as it stands, without the joining space it was counted with.
      tokens: this.used - this.units[0]!.tokens + this.options.countTokens(this.units[0]!.text),
    };
  }

  /** The spans of the runs' pages that the runs cover: flat `[page, start, end, x, y, width, height]`. */
  private spansOf(runs: [number, number, number, number][]): number[] {
    const spans: number[] = [];
    for (const [, length, page, pageStart] of runs) {
      const layout = this.units.find((u) => u.page === page)?.layout;
      if (!layout?.spans.length) continue;
      const within = spansWithin(layout.spans, pageStart, pageStart + length);
      for (let i = 0; i < within.length; i += SPAN_FIELDS) spans.push(page, ...within.slice(i, i + SPAN_FIELDS));
    }
    return spans;
  }

  /** A sentence (starting at `at` in its page's text) as units no larger than a chunk. */
  private unitsOf(sentence: string, page: number, at: number): Unit[] {
    const tokens = this.options.countTokens(` ${sentence}`);
    if (tokens <= this.budget) return [{ text: sentence, page, tokens, pageStart: at, follows: false }];
    const units: Unit[] = [];
    let text = '';
    let used = 0;
    let start = at;
    let wordAt = at;
    const flush = () => {
      if (text) units.push({ text, page, tokens: used, pageStart: start, follows: false });
      text = '';
      used = 0;
    };
    for (const word of sentence.split(' ')) {
      for (const piece of this.piecesOf(word)) {
        const t = this.options.countTokens(` ${piece}`);
        if (used + t > this.budget) flush();
        if (!text) start = wordAt;
        text = text ? `${text} ${piece}` : piece;
        used += t;
      }
      wordAt += word.length + 1;
    }
    flush();
    return units;
  }

  /** A word longer than a chunk, cut into pieces that surely fit (a character is at most 4 tokens). */
  private piecesOf(word: string): string[] {
    if (this.options.countTokens(` ${word}`) <= this.budget) return [word];
    const size = Math.max(1, Math.floor(this.budget / 4) - 1);
    const pieces: string[] = [];
    const chars = Array.from(word); // never split a surrogate pair
    for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(''));
    return pieces;
  }
}

/** Chunks of whole pages at once (tests and tools). */
export function chunkPages(
  pages: { page: number; text: string; layout?: PageLayout }[],
  options: ChunkerOptions,
): Chunk[] {
  const chunker = new Chunker(options);
  const out = pages.flatMap((p) => chunker.push(p.page, p.text, p.layout));
  return [...out, ...chunker.finish()];
}

// 2: text quality check, NFKC, right-to-left lines in logical order, CJK CMaps, OCR pages.
// 3: chunks say where their text is on its pages (runs and spans).
const CHUNKER_VERSION = 3;

/** What makes two chunkings of the same bytes identical (embeddings are reused only under the same one). */
export const chunkerId = (chunkTokens: number, overlapTokens: number) =>
  `v${CHUNKER_VERSION}:cl100k_base:${chunkTokens}:${overlapTokens}`;
