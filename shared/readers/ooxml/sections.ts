// A document of headings, prose and tables → parts by section (docs/DECISIONS.md "OOXML readers"):
// a new part at each heading of level 1 or 2, and a long section split at a paragraph or table
// row boundary once its part passes SECTION_CHARS, a split table repeating its header row. A part's
// location is the heading path it starts under, outermost first.

import { blocks, type DocumentPart, type PartBlock, partOf } from '../reader.ts';

export type SectionItem =
  | { kind: 'heading'; text: string; level: number }
  | { kind: 'prose'; text: string }
  | { kind: 'table'; rows: string[][] };

/** A section's part is split past this many characters of text. */
export const SECTION_CHARS = 8000;
/** Headings of this level or higher (1 is highest) start a new part. */
const PART_HEADING_LEVEL = 2;

export function sectionParts(items: Iterable<SectionItem>, maxChars = SECTION_CHARS): DocumentPart[] {
  const parts: DocumentPart[] = [];
  const headings: (string | undefined)[] = [];
  const path = () => headings.filter((text): text is string => text !== undefined);
  let current: PartBlock[] = [];
  let currentPath: string[] = [];
  let chars = 0;

  const flush = () => {
    if (current.length > 0) parts.push(partOf(current, { type: 'section', path: currentPath }));
    current = [];
    currentPath = path();
    chars = 0;
  };
  const add = (block: PartBlock, length: number) => {
    current.push(block);
    chars += length + 1;
  };

  for (const item of items) {
    if (item.kind === 'heading') {
      const level = Math.max(1, Math.min(9, item.level));
      headings.length = level - 1;
      headings[level - 1] = item.text;
      if (level <= PART_HEADING_LEVEL || chars > maxChars) flush();
      add(blocks.heading(item.text, level), item.text.length);
    } else if (item.kind === 'prose') {
      if (chars > 0 && chars + item.text.length > maxChars) flush();
      add(blocks.prose(item.text), item.text.length);
    } else {
      const [header, ...body] = item.rows;
      if (!header) continue;
      if (chars > 0 && chars + rowLength(header) > maxChars) flush();
      let rows = [header];
      let length = rowLength(header);
      const headerLength = rowLength(header);
      for (const row of body) {
        const added = rowLength(row);
        if (rows.length > 1 && chars + length + added > maxChars) {
          add(blocks.table(rows), length);
          flush();
          rows = [header];
          length = headerLength;
        }
        rows.push(row);
        length += added;
      }
      add(blocks.table(rows), length);
    }
  }
  flush();
  return parts.length > 0 ? parts : [partOf([], { type: 'section', path: [] })];
}

const rowLength = (cells: string[]) => cells.reduce((sum, cell) => sum + cell.length + 3, 2);

/** A table's rows padded to one width, rows without any text left out; undefined when none is left. */
export function squareTable(rows: string[][]): string[][] | undefined {
  const kept = rows.filter((row) => row.some(Boolean));
  let width = 0;
  for (const row of kept) width = Math.max(width, row.length);
  // A row already as wide is kept as it is (the rows are the reader's own, read once).
  const padded = (row: string[]) =>
    row.length === width ? row : [...row, ...Array<string>(width - row.length).fill('')];
  return kept.length > 0 ? kept.map(padded) : undefined;
}
