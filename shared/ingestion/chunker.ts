import type { Chunk } from '../files/chunk-repository.ts';
import { splitSentences } from '../sentences.ts';
import type { PageBlock } from '../pdf/layout/page-layout.ts';
import { SectionPath } from '../pdf/layout/sections.ts';
import { SPAN_FIELDS, spansWithin, type PageLayout } from '../pdf/positions.ts';

// Token-aware chunking: pages are cut into sentences, sentences are packed into
// chunks of at most `chunkTokens`, and each chunk starts with the last whole sentences of the
// previous one (up to `overlapTokens`), so a passage cut at a boundary is still found whole.
// A sentence longer than a chunk is cut between words (a word longer than a chunk, between
// characters). Chunks may span pages; `pageStarts` maps offsets in the chunk text to pages.
// Pages are pushed one at a time, so memory stays bounded by one chunk plus one page.
// A page with a layout (layout/page-layout.ts) is chunked block by block: each chunk carries the
// section path it mostly sits under, table rows are units of their own joined by line breaks,
// and a chunk that breaks inside a table starts with the table's header row again, then only
// the table's own rows as overlap (docs/DECISIONS.md, Tables and sections).
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
  /** Tokens of the unit with the space (a line break for table rows) that joins it to the previous one. */
  tokens: number;
  /** The heading path the unit sits under. */
  section?: string;
  /** The table the unit is a row of. */
  table?: TableOf;
  /** Where the unit starts in its page's text; -1 when it is not a verbatim stretch of it (a word cut in pieces). */
  pageStart: number;
  /** The page text between the previous unit pushed and this one, when that unit is of the same page and ends at most a character before. */
  joinedBy?: string;
  /** The order in which units were pushed (a run of page text continues only from the unit pushed just before). */
  seq: number;
  layout?: PageLayout;
}

/** A table being chunked: its header row's unit (the header itself has `table` set too). */
interface TableOf {
  header: Unit;
}

/** Table rows are joined by line breaks (Markdown rows), as in the page text. */
const joinerOf = (unit: Unit, previous: Unit) => (unit.table || previous.table ? '\n' : ' ');

export class Chunker {
  private units: Unit[] = [];
  private used = 0;
  private next: number;
  private readonly overlap: number;
  private readonly sections = new SectionPath();
  /** The table the text so far ends with (a table opening the next page may continue it). */
  private openTable: { table: TableOf; columns: number; page: number } | undefined;
  /** The last unit pushed: its page and where it ends in that page's text (-1: not a verbatim stretch). */
  private lastPlaced = { page: 0, end: -1, seq: 0 };

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

  /**
   * Adds one page of normalised text (with its blocks, when it has headings or tables, and where
   * it is drawn, when known); the chunks it completed.
   */
  push(page: number, text: string, blocks?: readonly PageBlock[], layout?: PageLayout): Chunk[] {
    const out: Chunk[] = [];
    let cursor = 0; // where the next block is looked for in the page text
    const find = (piece: string) => {
      const at = text.indexOf(piece, cursor);
      if (at >= 0) cursor = at + piece.length;
      return at;
    };
    const place = (unit: Omit<Unit, 'seq'>) => this.placed(unit, text, layout);
    for (const block of blocks ?? [{ kind: 'text', text, lines: [] }]) {
      if (block.kind === 'table') {
        this.addTable(block.rows, page, out, find, place);
        continue;
      }
      // Text with letters ends a table; a folio (a page number) between two pages of one does not.
      if (block.kind === 'heading' || /\p{L}/u.test(block.text)) this.openTable = undefined;
      if (block.kind === 'heading') this.sections.enter(block);
      const section = this.sections.current;
      const blockAt = find(block.text);
      let from = 0;
      for (const sentence of splitSentences(block.text)) {
        const at = block.text.indexOf(sentence, from);
        from = at + sentence.length;
        for (const unit of this.unitsOf(sentence, page, blockAt < 0 || at < 0 ? -1 : blockAt + at))
          this.add(place({ ...unit, section }), out);
      }
    }
    return out;
  }

  /** The unit with its place checked against the page text and its link to the unit pushed before. */
  private placed(unit: Omit<Unit, 'seq'>, pageText: string, layout?: PageLayout): Unit {
    const pageStart = unit.pageStart >= 0 && pageText.startsWith(unit.text, unit.pageStart) ? unit.pageStart : -1;
    const last = this.lastPlaced;
    const gap = pageStart - last.end;
    const joinedBy =
      pageStart >= 0 && last.page === unit.page && last.end >= 0 && gap >= 0 && gap <= 1
        ? pageText.slice(last.end, pageStart)
        : undefined;
    const seq = last.seq + 1;
    this.lastPlaced = { page: unit.page, end: pageStart >= 0 ? pageStart + unit.text.length : -1, seq };
    return { ...unit, pageStart, joinedBy, seq, layout };
  }

  /**
   * A table's rows, one unit each (a row longer than a chunk is cut between words). A table that
   * opens a page right after a table of as many columns on an earlier page continues it: its rows
   * come under the first page's header, and a first row repeating that header is left out.
   */
  private addTable(
    rows: readonly { text: string; cells: unknown[] }[],
    page: number,
    out: Chunk[],
    find: (piece: string) => number,
    place: (unit: Omit<Unit, 'seq'>) => Unit,
  ): void {
    const section = this.sections.current;
    const columns = rows[0]?.cells.length ?? 0;
    const open = this.openTable;
    const continued = open && open.columns === columns && open.page < page ? open.table : undefined;
    let table = continued;
    const repeatsHeader = continued && rows[0]?.text === continued.header.text;
    if (repeatsHeader) find(rows[0]!.text); // in the page text, not in the chunks
    for (const row of repeatsHeader ? rows.slice(1) : rows) {
      const rowAt = find(row.text);
      const tokens = this.options.countTokens(`\n${row.text}`);
      const units =
        tokens <= this.budget
          ? [{ text: row.text, page, tokens, pageStart: rowAt }]
          : this.unitsOf(row.text, page, rowAt);
      for (const unit of units) {
        const rowUnit = place({ ...unit, section });
        table ??= { header: rowUnit };
        rowUnit.table = table;
        this.add(rowUnit, out);
      }
    }
    this.openTable = table && { table, columns, page };
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
      if (unit.table && unit.table.header !== unit) this.repeatHeader(unit);
      else this.headOverlapRows(unit.tokens);
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

  /**
   * A chunk that breaks inside a table starts with the table's header row, then the rows kept as
   * overlap (prose before the table is dropped from it), so every chunk holding rows names their
   * columns.
   */
  private repeatHeader(incoming: Unit): void {
    const { header } = incoming.table!;
    if (header.tokens + incoming.tokens > this.budget) return;
    const rows = this.units.filter((u) => u.table === incoming.table && u !== header);
    let tokens = rows.reduce((n, u) => n + u.tokens, 0);
    while (rows.length && header.tokens + tokens + incoming.tokens > this.budget) tokens -= rows.shift()!.tokens;
    this.units = [header, ...rows];
    this.used = header.tokens + tokens;
    this.onlyOverlap = true;
  }

  /** Overlap that starts inside a table (its last rows, before other text) gets the table's header, or is dropped. */
  private headOverlapRows(incoming: number): void {
    const first = this.units[0];
    if (!first?.table || first === first.table.header) return;
    const { header } = first.table;
    if (header.tokens + this.used + incoming <= this.budget) {
      this.units.unshift(header);
      this.used += header.tokens;
      return;
    }
    while (this.units[0]?.table === first.table) this.used -= this.units.shift()!.tokens;
    this.onlyOverlap = this.units.length > 0;
  }

  private emit(): Chunk {
    let text = '';
    const pageStarts: [number, number][] = [];
    const bySection = new Map<string | undefined, number>();
    const sectionStarts: [number, string][] = [];
    const runs: [number, number, number, number][] = [];
    let tabular = false;
    this.units.forEach((u, k) => {
      const previous = this.units[k - 1];
      const joiner = previous ? joinerOf(u, previous) : '';
      text += joiner;
      if (pageStarts.at(-1)?.[1] !== u.page) pageStarts.push([text.length, u.page]);
      if (u.section !== undefined && sectionStarts.at(-1)?.[1] !== u.section)
        sectionStarts.push([text.length, u.section]);
      if (u.pageStart >= 0) {
        // One run while the units follow each other in the page text as they do in the chunk.
        const run = runs.at(-1);
        const follows = previous?.seq === u.seq - 1 && previous.pageStart >= 0 && u.joinedBy === joiner;
        if (run && follows) run[1] = text.length + u.text.length - run[0];
        else runs.push([text.length, u.text.length, u.page, u.pageStart]);
      }
      text += u.text;
      bySection.set(u.section, (bySection.get(u.section) ?? 0) + u.tokens);
      if (u.table) tabular = true;
    });
    // The section most of the chunk's text sits under (the earlier one on a tie).
    let section: string | undefined;
    let most = -1;
    for (const [name, tokens] of bySection)
      if (tokens > most) {
        section = name;
        most = tokens;
      }
    return {
      index: this.next++,
      text,
      page: this.units[0]!.page,
      pageEnd: this.units.at(-1)!.page,
      pageStarts,
      runs,
      spans: this.spansOf(runs),
      // Exact: the first unit counted as it stands, without the joining space it was counted with;
      // table rows were counted with a line break that prose beside them is joined by too: counted again.
      tokens: tabular
        ? this.options.countTokens(text)
        : this.used - this.units[0]!.tokens + this.options.countTokens(this.units[0]!.text),
      section,
      // Where the chunk runs over more than one section, where each starts (a quote's own section).
      sectionStarts: sectionStarts.length > 1 ? sectionStarts : undefined,
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
  private unitsOf(sentence: string, page: number, at: number): Omit<Unit, 'seq'>[] {
    const tokens = this.options.countTokens(` ${sentence}`);
    if (tokens <= this.budget) return [{ text: sentence, page, tokens, pageStart: at }];
    const units: Omit<Unit, 'seq'>[] = [];
    let text = '';
    let used = 0;
    let start = at;
    let wordAt = at;
    const flush = () => {
      if (text) units.push({ text, page, tokens: used, pageStart: start });
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
  pages: { page: number; text: string; blocks?: PageBlock[]; layout?: PageLayout }[],
  options: ChunkerOptions,
): Chunk[] {
  const chunker = new Chunker(options);
  const out = pages.flatMap((p) => chunker.push(p.page, p.text, p.blocks, p.layout));
  return [...out, ...chunker.finish()];
}

// 2: text quality check, NFKC, right-to-left lines in logical order, CJK CMaps, OCR pages.
// 3: right-to-left ligatures in logical order (docs/DECISIONS.md, "Right-to-left ligatures");
//    tables as Markdown rows with the header repeated, headings as units of their own, sections;
//    chunks say where their text is on its pages (runs and spans).
const CHUNKER_VERSION = 3;

/** What makes two chunkings of the same bytes identical (embeddings are reused only under the same one). */
export const chunkerId = (chunkTokens: number, overlapTokens: number) =>
  `v${CHUNKER_VERSION}:cl100k_base:${chunkTokens}:${overlapTokens}`;
