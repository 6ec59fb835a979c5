import type { Line, Segment } from './lines.ts';

// Tables recognised from text positions: a run of at least MIN_ROWS consecutive lines, each split
// into two or more segments (lines.ts) that fall into the same column bands, one segment per band
// (a cell may be empty). Runs that only look like that are refused: two-column prose (its cells
// are long), a list (its first column is bullets or numbers), a run with most cells empty.
// Tables drawn column by column, with cells wrapped over several lines or without wide gaps
// between columns are not recognised; their text is read as prose, as before.

export interface Table {
  /** Lines of the page [from, to) that the table covers. */
  from: number;
  to: number;
  /** Rows of cells, the first row the header; an empty cell is undefined. */
  rows: (Segment | undefined)[][];
}

const MIN_ROWS = 3;
/** A column whose cells have at most this many words (median) is a short one. */
const SHORT_CELL_WORDS = 3;
/** Two-column runs whose columns run longer than this (median words) are prose, not a table. */
const TWO_COLUMN_MAX_WORDS = 6;
/** Any column longer than this (median words) is prose. */
const MAX_COLUMN_WORDS = 12;
const MIN_FILLED = 0.6;
/** Rows further apart than this many font sizes are not one table. */
const MAX_ROW_GAP = 3;

const LIST_MARKER = /^(?:\(?(?:\d{1,3}|[a-z]|[ivxlc]{1,6})[.)]|[•◦▪●‣∙·*–—-])$/i;

interface Band {
  x0: number;
  x1: number;
}

/** The tables of a page, in line order, from its lines. */
export function findTables(lines: readonly Line[]): Table[] {
  const tables: Table[] = [];
  let i = 0;
  while (i < lines.length) {
    const table = tableFrom(lines, i);
    if (table) {
      tables.push(table);
      i = table.to;
    } else i++;
  }
  return tables;
}

function tableFrom(lines: readonly Line[], from: number): Table | undefined {
  const first = lines[from]!;
  if (first.segments.length < 2) return undefined;
  const bands: Band[] = first.segments.map((s) => ({ x0: s.x0, x1: s.x1 }));
  const rows: (Segment | undefined)[][] = [[...first.segments]];
  let to = from + 1;
  for (; to < lines.length; to++) {
    const row = cellsIn(lines[to]!, lines[to - 1]!, bands);
    if (!row) break;
    rows.push(row);
  }
  if (rows.length < MIN_ROWS || !looksTabular(rows)) return undefined;
  return { from, to, rows };
}

const overlaps = (s: Segment, b: Band) => s.x0 < b.x1 && s.x1 > b.x0;

/** The line's segments placed in the bands (which grow to hold them), or undefined when the line is no row of them. */
function cellsIn(line: Line, previous: Line, bands: Band[]): (Segment | undefined)[] | undefined {
  if (line.segments.length < 2 || line.segments.length > bands.length) return undefined;
  // The next row sits below the previous one, not far from it, in a similar size.
  const { y } = line;
  const prevY = previous.y;
  const size = Math.max(line.size, previous.size) || 1;
  if (y === undefined || prevY === undefined || y >= prevY || prevY - y > size * MAX_ROW_GAP) return undefined;
  if (Math.abs(line.size - previous.size) > size * 0.2) return undefined;
  const cells: (Segment | undefined)[] = bands.map(() => undefined);
  for (const segment of line.segments) {
    let hit = -1;
    for (let k = 0; k < bands.length; k++) {
      if (!overlaps(segment, bands[k]!)) continue;
      if (hit !== -1) return undefined; // across two columns
      hit = k;
    }
    if (hit === -1 || cells[hit]) return undefined;
    cells[hit] = segment;
  }
  cells.forEach((cell, k) => {
    if (!cell) return;
    bands[k]!.x0 = Math.min(bands[k]!.x0, cell.x0);
    bands[k]!.x1 = Math.max(bands[k]!.x1, cell.x1);
  });
  // Grown bands that now touch each other no longer say where a column is.
  for (let k = 1; k < bands.length; k++) if (bands[k]!.x0 <= bands[k - 1]!.x1) return undefined;
  return cells;
}

const wordCount = (s: Segment | undefined) => (s ? s.text.split(' ').filter(Boolean).length : 0);

function median(values: number[]): number {
  if (!values.length) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function looksTabular(rows: (Segment | undefined)[][]): boolean {
  const columns = rows[0]!.length;
  const filled = rows.reduce((n, row) => n + row.filter(Boolean).length, 0);
  if (filled < rows.length * columns * MIN_FILLED) return false;
  const medians = Array.from({ length: columns }, (_, k) =>
    median(rows.flatMap((row) => (row[k] ? [wordCount(row[k])] : []))),
  );
  if (medians.some((m) => m > MAX_COLUMN_WORDS)) return false;
  if (columns === 2 && medians.some((m) => m > TWO_COLUMN_MAX_WORDS)) return false;
  if (medians.filter((m) => m <= SHORT_CELL_WORDS).length * 2 < columns) return false;
  // A list: every first cell a bullet or a number (the header row included).
  if (rows.every((row) => row[0] && LIST_MARKER.test(row[0].text))) return false;
  return true;
}
