import type { Chunk } from '../files/chunk-repository.ts';
import { splitSentences } from '../sentences.ts';

// Token-aware chunking: pages are cut into sentences, sentences are packed into
// chunks of at most `chunkTokens`, and each chunk starts with the last whole sentences of the
// previous one (up to `overlapTokens`), so a passage cut at a boundary is still found whole.
// A sentence longer than a chunk is cut between words (a word longer than a chunk, between
// characters). Chunks may span pages; `pageStarts` maps offsets in the chunk text to pages.
// Pages are pushed one at a time, so memory stays bounded by one chunk plus one page.

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

  /** Adds one page of normalised text; the chunks it completed. */
  push(page: number, text: string): Chunk[] {
    const out: Chunk[] = [];
    for (const sentence of splitSentences(text)) {
      for (const unit of this.unitsOf(sentence, page)) this.add(unit, out);
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
    for (const u of this.units) {
      if (text) text += ' ';
      if (pageStarts.at(-1)?.[1] !== u.page) pageStarts.push([text.length, u.page]);
      text += u.text;
    }
    return {
      index: this.next++,
      text,
      page: this.units[0]!.page,
      pageEnd: this.units.at(-1)!.page,
      pageStarts,
      // Exact: the first unit counted as it stands, without the joining space it was counted with.
      tokens: this.used - this.units[0]!.tokens + this.options.countTokens(this.units[0]!.text),
    };
  }

  /** A sentence as units no larger than a chunk. */
  private unitsOf(sentence: string, page: number): Unit[] {
    const tokens = this.options.countTokens(` ${sentence}`);
    if (tokens <= this.budget) return [{ text: sentence, page, tokens }];
    const units: Unit[] = [];
    let text = '';
    let used = 0;
    const flush = () => {
      if (text) units.push({ text, page, tokens: used });
      text = '';
      used = 0;
    };
    for (const word of sentence.split(' ')) {
      for (const piece of this.piecesOf(word)) {
        const t = this.options.countTokens(` ${piece}`);
        if (used + t > this.budget) flush();
        text = text ? `${text} ${piece}` : piece;
        used += t;
      }
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
export function chunkPages(pages: { page: number; text: string }[], options: ChunkerOptions): Chunk[] {
  const chunker = new Chunker(options);
  const out = pages.flatMap((p) => chunker.push(p.page, p.text));
  return [...out, ...chunker.finish()];
}

// 2: text quality check, NFKC, right-to-left lines in logical order, CJK CMaps, OCR pages.
// 3: right-to-left ligatures in logical order (docs/DECISIONS.md, "Right-to-left ligatures").
const CHUNKER_VERSION = 3;

/** What makes two chunkings of the same bytes identical (embeddings are reused only under the same one). */
export const chunkerId = (chunkTokens: number, overlapTokens: number) =>
  `v${CHUNKER_VERSION}:cl100k_base:${chunkTokens}:${overlapTokens}`;
