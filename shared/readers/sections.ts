// Blocks → parts, for every format read as sections (Word, HTML, Markdown, text; docs/DECISIONS.md
// "Markup and text readers"):
// a part starts at each heading of level 1 or 2 and carries the path of the headings it sits under;
// a part that grows past SECTION_TARGET_CHARS is cut at the next block boundary (a prose block or a
// table longer than that is cut first: prose at a space, a table between rows with its header
// repeated), so a part stays a size a reader can show and a citation can point into.

import { blocks, type DocumentPart, normaliseText, type PartBlock, partOf } from './reader.ts';

/** What a reader of sections finds, in reading order, before it is cut into parts. */
export type SectionBlock =
  | { kind: 'heading'; text: string; level: number }
  | { kind: 'prose'; text: string }
  /** rows[0] is the header. */
  | { kind: 'table'; rows: string[][] };

/** A part is cut at the first block boundary past this many characters. */
export const SECTION_TARGET_CHARS = 8_000;

/** The level at or above which a heading starts a part. */
const PART_HEADING_LEVEL = 2;

/** Cuts normalised prose into pieces of at most `max` characters, at a space where there is one. */
export function splitProse(text: string, max = SECTION_TARGET_CHARS): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > max) {
    let cut = rest.lastIndexOf(' ', max);
    if (cut < max / 2) {
      cut = max;
      // Never between the two halves of a surrogate pair.
      const code = rest.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut--;
    }
    pieces.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest) pieces.push(rest);
  return pieces;
}

/** A table cut into tables of at most about `max` characters, each starting with the header row. */
function splitTable(rows: string[][], max = SECTION_TARGET_CHARS): PartBlock[] {
  const whole = blocks.table(rows);
  if (blockLength(whole) <= max) return [whole];
  const [header, ...body] = whole.kind === 'table' ? whole.rows : [];
  const tables: PartBlock[] = [];
  let group: typeof body = [];
  let chars = header!.text.length;
  for (const row of body) {
    if (group.length > 0 && chars + row.text.length + 1 > max) {
      tables.push({ kind: 'table', rows: [header!, ...group] });
      group = [];
      chars = header!.text.length;
    }
    group.push(row);
    chars += row.text.length + 1;
  }
  tables.push({ kind: 'table', rows: [header!, ...group] });
  return tables;
}

/** `blockText(block).length`, without joining a table's rows. */
function blockLength(block: PartBlock): number {
  if (block.kind !== 'table') return block.text.length;
  let length = Math.max(0, block.rows.length - 1);
  for (const row of block.rows) length += row.text.length;
  return length;
}

/** A table's rows with their cells normalised, the rows left without text dropped. */
function normalisedRows(rows: string[][]): string[][] {
  const kept: string[][] = [];
  for (const row of rows) {
    const cells: string[] = new Array(row.length);
    let text = false;
    for (let c = 0; c < row.length; c++) {
      const cell = normaliseText(row[c]!);
      cells[c] = cell;
      if (cell !== '') text = true;
    }
    if (text) kept.push(cells);
  }
  return kept;
}

/** The blocks' parts: sections under their heading paths (one empty part for a document without text). */
export function sectionParts(source: Iterable<SectionBlock>): DocumentPart[] {
  const parts: DocumentPart[] = [];
  const open: { level: number; text: string }[] = []; // the headings the reader is under
  let current: PartBlock[] = [];
  let currentPath: string[] = [];
  let chars = 0;

  const close = () => {
    if (current.length > 0) parts.push(partOf(current, { type: 'section', path: currentPath }));
    current = [];
    chars = 0;
  };
  const add = (block: PartBlock) => {
    const size = blockLength(block) + 1;
    // Headings are not left at the end of a part without what they head: they move on with it
    // (a part of headings only is cut once it is half full: a run of headings is still bounded).
    if (current.length > 0 && chars + size > SECTION_TARGET_CHARS) {
      let heads = current.length;
      while (heads > 0 && current[heads - 1]!.kind === 'heading') heads--;
      if (heads > 0) {
        const carried = current.splice(heads);
        close();
        for (const heading of carried) {
          current.push(heading);
          chars += blockLength(heading) + 1;
        }
      } else if (chars > SECTION_TARGET_CHARS / 2) close();
    }
    if (current.length === 0) currentPath = open.map((heading) => heading.text);
    current.push(block);
    chars += size;
  };

  for (const block of source) {
    if (block.kind === 'heading') {
      const text = normaliseText(block.text);
      if (!text) continue;
      const level = Math.min(6, Math.max(1, Math.trunc(block.level)));
      while (open.length > 0 && open.at(-1)!.level >= level) open.pop();
      if (level <= PART_HEADING_LEVEL) close();
      open.push({ level, text });
      for (const piece of splitProse(text)) add(blocks.heading(piece, level));
    } else if (block.kind === 'prose') {
      for (const piece of splitProse(normaliseText(block.text))) add(blocks.prose(piece));
    } else {
      const rows = normalisedRows(block.rows);
      if (rows.length > 0) for (const table of splitTable(rows)) add(table);
    }
  }
  close();
  return parts.length > 0 ? parts : [partOf([], { type: 'section', path: [] })];
}
