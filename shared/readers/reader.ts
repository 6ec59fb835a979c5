// What a document reader gives the ingestion pipeline, whatever the format: the document as
// parts (pages, slides, sheets, sections), each with its text, its structure (headings, prose,
// tables as Markdown rows) and its place in the document (docs/DECISIONS.md "Documents, not only
// PDFs"). A reader never imports the pipeline: it turns bytes into parts within its bounds and
// throws ReadRefused for a document it will not read.

/** Formats the service reads, as the status and the citations name them. */
export const DOCUMENT_FORMATS = ['pdf', 'docx', 'pptx', 'xlsx', 'html', 'markdown', 'text'] as const;
export type DocumentFormat = (typeof DOCUMENT_FORMATS)[number];

/** Where a part sits in its document. */
export type PartLocation =
  | { type: 'page'; page: number }
  | { type: 'slide'; slide: number; title?: string }
  /** `range`: the A1 range of the rows the part (or, in a citation, the quote) covers. */
  | { type: 'sheet'; sheet: string; range: string }
  /** The heading path the part sits under (outermost first; empty before the first heading). */
  | { type: 'section'; path: string[] };

/** A piece of a part's text (PDF blocks also carry the indices of the text items they came from). */
export interface TracedText {
  text: string;
  items: number[];
}

/**
 * A part's structure, in reading order. `size` ranks headings: a heading closes every open
 * heading of its size or smaller (structured formats use `headingSize(level)`).
 */
export type PartBlock =
  | { kind: 'text'; text: string; lines: TracedText[] }
  | { kind: 'heading'; text: string; size: number; styled: boolean; lines: TracedText[] }
  /** rows[0] is the header; each row's text is `| a | b |`, as it stands in the part's text. */
  | { kind: 'table'; rows: { text: string; cells: TracedText[] }[] };

export interface DocumentPart {
  /** The part's text: its blocks joined by `partTextOf` (what citations' charStart/charEnd index). */
  text: string;
  blocks: PartBlock[];
  location: PartLocation;
  /** A sheet's part: the sheet row number of each line of `text` (a quote's range is read from them). */
  rows?: number[];
  /** A sheet's part: its first and last column letters (a quote's range spans them). */
  columns?: [string, string];
}

/** What a reader may spend on one document (the child it runs in also bounds memory and time). */
export interface ReaderLimits {
  /** Entries in a package (zip). */
  maxEntries: number;
  /** Bytes a package may inflate to, all entries together. */
  maxUncompressedBytes: number;
  /** Inflated size over compressed size, per entry. */
  maxCompressionRatio: number;
  /** Elements nested in markup (HTML, XML). */
  maxDepth: number;
  /** Characters of text the whole document may give. */
  maxTextChars: number;
  /** Cells a workbook may give. */
  maxCells: number;
}

export const DEFAULT_READER_LIMITS: ReaderLimits = {
  maxEntries: 10_000,
  maxUncompressedBytes: 512 * 1024 * 1024,
  maxCompressionRatio: 200,
  maxDepth: 512,
  maxTextChars: 64 * 1024 * 1024,
  maxCells: 2_000_000,
};

/** Why a document is not read: the message says what the bytes are and what to do. */
export type RefusalReason =
  | 'UNSUPPORTED_TYPE' // not a format read here, a legacy binary Office file, an encrypted package
  | 'TOO_COMPLEX' // past a bound (entries, size, ratio, depth, cells)
  | 'INVALID_DOCUMENT'; // damaged: not the package or markup it claims to be

export class ReadRefused extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
    this.name = 'ReadRefused';
  }
}

export interface DocumentReader {
  readonly format: DocumentFormat;
  /** The document's parts, in order (at least one; a part may have empty text). */
  read(bytes: Uint8Array, limits: ReaderLimits): Promise<DocumentPart[]>;
}

/** Heading level 1..6 → size (level 1 ranks highest). */
export const headingSize = (level: number) => 7 - Math.min(6, Math.max(1, level));

/**
 * `| a | b |`; a pipe inside a cell is escaped, an empty cell is blank (`| |`), runs of spaces are
 * one. Built cell by cell: a space run is looked for in each (short) cell, never in the joined row,
 * whose scan would flatten it first (the most of a table's cost).
 */
export function markdownRow(cells: string[]): string {
  if (cells.length === 0) return '| |';
  let row = '|';
  for (let k = 0; k < cells.length; k++) {
    let cell = cells[k]!;
    if (cell.includes('|')) cell = cell.replaceAll('|', '\\|');
    if (cell.includes('  ') || cell.charCodeAt(0) === 0x20 || cell.charCodeAt(cell.length - 1) === 0x20)
      cell = cell.replace(/ {2,}/g, ' ').replace(/^ | $/g, '');
    row += cell ? ` ${cell} |` : ' |';
  }
  return row;
}

/** The text of a block as it stands in the part's text and in chunks. */
export function blockText(block: PartBlock): string {
  if (block.kind !== 'table') return block.text;
  const lines: string[] = new Array(block.rows.length);
  for (let r = 0; r < lines.length; r++) lines[r] = block.rows[r]!.text;
  return lines.join('\n');
}

/** Blocks joined: by a space between prose and headings, by a line break before and after a table. */
export function partTextOf(blocks: readonly PartBlock[]): string {
  let text = '';
  blocks.forEach((block, k) => {
    if (k > 0) text += block.kind === 'table' || blocks[k - 1]!.kind === 'table' ? '\n' : ' ';
    text += blockText(block);
  });
  return text;
}

// C0/C1 controls other than whitespace, and noncharacters.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's job
const CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffe\uffff]/g;

/** From this length on, normaliseText tells plain ASCII by native scans rather than a loop. */
const NATIVE_SCAN_CHARS = 64;
/** A character other than printable ASCII and the space, or two spaces: one scan for both. */
const NOT_SINGLE_SPACED_ASCII = /[^\x20-\x7e]| {2}/;
/** A character past ASCII. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the range starts at U+0000 on purpose
const NOT_ASCII = /[^\x00-\x7f]/;

/** One line of text as every reader gives it: NFKC, no controls, whitespace runs as single spaces. */
export function normaliseText(raw: string): string {
  // ASCII (most text of most documents) is its own NFKC form, and its only controls and whitespace
  // are U+0000–U+0020 and U+007F: a run of them is one space, none at either end. Printable ASCII
  // with single inner spaces is returned as it is.
  const length = raw.length;
  if (length < NATIVE_SCAN_CHARS) {
    // A short text (a cell, a run) in one loop: a pattern's fixed cost would outweigh its scan.
    let plain = true;
    for (let k = 0; k < length; k++) {
      const code = raw.charCodeAt(k);
      if (code > 0x20 && code < 0x7f) continue;
      if (code >= 0x80) return normaliseUnicode(raw);
      if (code !== 0x20 || k === 0 || k === length - 1 || raw.charCodeAt(k - 1) === 0x20) plain = false;
    }
    if (plain) return raw;
  } else {
    // A longer one by scans the engine runs natively, several times faster than a loop.
    if (!NOT_SINGLE_SPACED_ASCII.test(raw) && raw.charCodeAt(0) !== 0x20 && raw.charCodeAt(length - 1) !== 0x20)
      return raw;
    if (NOT_ASCII.test(raw)) return normaliseUnicode(raw);
  }
  // Often only the ends need trimming (a cell's text after the space its element opened with).
  let start = 0;
  let end = length;
  while (start < end && isAsciiSpace(raw.charCodeAt(start))) start++;
  while (end > start && isAsciiSpace(raw.charCodeAt(end - 1))) end--;
  let inner = true;
  for (let k = start + 1; k < end && inner; k++) {
    const code = raw.charCodeAt(k);
    if (isAsciiSpace(code) && (code !== 0x20 || isAsciiSpace(raw.charCodeAt(k - 1)))) inner = false;
  }
  if (inner) return raw.slice(start, end);
  const words: string[] = [];
  let word = -1; // where the current word starts
  for (let k = start; k <= end; k++) {
    if (k === end || isAsciiSpace(raw.charCodeAt(k))) {
      if (word >= 0) words.push(raw.slice(word, k));
      word = -1;
    } else if (word < 0) word = k;
  }
  return words.join(' ');
}

/** What normaliseText turns into a space in ASCII text: controls, whitespace, DEL. */
const isAsciiSpace = (code: number) => code <= 0x20 || code === 0x7f;

function normaliseUnicode(raw: string): string {
  return raw
    .normalize('NFKC')
    .replace(CONTROLS, ' ')
    .replace(/[\s\u00a0]+/g, ' ')
    .trim();
}

// The lines and text items of structured formats' blocks: none, one frozen empty array for all
// (a workbook's tables hold up to millions of cells: an array each is garbage the reader makes).
const NO_LINES = Object.freeze([]) as unknown as TracedText[];
const NO_ITEMS = Object.freeze([]) as unknown as number[];

/** Builders for readers of structured formats (no text items behind their text). */
export const blocks = {
  heading: (text: string, level: number): PartBlock => ({
    kind: 'heading',
    text,
    size: headingSize(level),
    styled: false,
    lines: NO_LINES,
  }),
  prose: (text: string): PartBlock => ({ kind: 'text', text, lines: NO_LINES }),
  /** rows[0] is the header. */
  table: (rows: string[][]): PartBlock => {
    // Loops rather than maps: a workbook's part is a table of thousands of rows.
    const tableRows: { text: string; cells: TracedText[] }[] = new Array(rows.length);
    for (let r = 0; r < rows.length; r++) {
      const cells = rows[r]!;
      const traced: TracedText[] = new Array(cells.length);
      for (let c = 0; c < cells.length; c++) traced[c] = { text: cells[c]!, items: NO_ITEMS };
      tableRows[r] = { text: markdownRow(cells), cells: traced };
    }
    return { kind: 'table', rows: tableRows };
  },
};

/** A part of blocks (text normalised by the reader: single spaces, no control characters). */
export const partOf = (parts: PartBlock[], location: PartLocation): DocumentPart => ({
  text: partTextOf(parts),
  blocks: parts,
  location,
});
