// Excel workbooks (docs/DECISIONS.md "OOXML readers"): the visible worksheets in workbook order
// (hidden and very hidden sheets, chart sheets and external links are never read). A cell reads as
// its cached value: shared and inline strings, booleans as TRUE/FALSE, numbers as written, errors
// as their text, dates as ISO dates; a formula without a cached value is blank. A sheet's used
// rows read as one table whose header is its first non-empty row, split into parts of at most
// ROWS_PER_PART rows below the header, each part's table starting with the header again. The
// declared dimension is ignored; the cells actually present, and the cells of the tables they make
// (rows × columns, blanks included), are each counted against limits.maxCells.

import { blocks, type DocumentPart, type DocumentReader, partOf, ReadRefused, type ReaderLimits } from '../reader.ts';
import { type OpenedDocument, openAs } from './detect.ts';
import { firstOfKind, normalise, readRelationships, relationshipIdOf, TextBudget } from './opc.ts';
import type { OoxmlPackage } from './package.ts';
import { attr, readXmlPart } from './xml.ts';
import {
  cellText,
  columnLetters,
  columnOfRef,
  readNumberFormats,
  readSharedStrings,
  type WorkbookDates,
} from './xlsx-cells.ts';

/** Rows below the header in one part. */
export const ROWS_PER_PART = 100;

interface SheetRef {
  name: string;
  part: string;
}

interface SheetRow {
  row: number;
  /** The columns of the cells with text, ascending (a row's cells only move right), and their texts. */
  columns: number[];
  texts: string[];
}

export const xlsxReader: DocumentReader = {
  format: 'xlsx',
  async read(bytes: Uint8Array, limits: ReaderLimits): Promise<DocumentPart[]> {
    return readXlsx(openAs(bytes, limits, 'xlsx'), limits);
  },
};

/** The parts of a package opened as xlsx (format detection opens it once for both). */
export function readXlsx({ pkg, mainPart }: OpenedDocument, limits: ReaderLimits): DocumentPart[] {
  const rels = readRelationships(pkg, mainPart, limits);
  const { sheets, system1904 } = readWorkbook(pkg, mainPart, limits, rels);
  const stringsPart = firstOfKind(pkg, rels, 'sharedStrings');
  const shared = stringsPart ? readSharedStrings(pkg, stringsPart, limits) : [];
  const stylesPart = firstOfKind(pkg, rels, 'styles');
  const dates: WorkbookDates = {
    styles: stylesPart ? readNumberFormats(pkg, stylesPart, limits) : new Set<number>(),
    system1904,
  };
  const budget = new TextBudget(limits.maxTextChars);
  const cells = { count: 0, padded: 0 };
  const parts = sheets.flatMap((sheet) => {
    const rows = readSheet(pkg, sheet.part, limits, { shared, dates, cells });
    return sheetParts(sheet.name, rows, limits, cells, budget);
  });
  return parts.length > 0 ? parts : [partOf([], { type: 'sheet', sheet: sheets[0]?.name ?? '', range: 'A1:A1' })];
}

/** xl/workbook.xml: its sheets that are visible worksheets, in workbook order, and its date system. */
function readWorkbook(
  pkg: OoxmlPackage,
  mainPart: string,
  limits: ReaderLimits,
  rels: ReturnType<typeof readRelationships>,
): { sheets: SheetRef[]; system1904: boolean } {
  const sheets: SheetRef[] = [];
  let system1904 = false;
  readXmlPart(pkg, mainPart, limits, {
    open(element) {
      if (element.local === 'workbookPr') {
        const value = attr(element, 'date1904');
        system1904 = value === '1' || value === 'true';
        return;
      }
      if (element.local !== 'sheet') return;
      const state = attr(element, 'state') ?? 'visible';
      if (state !== 'visible') return;
      const id = relationshipIdOf(element.attributes);
      const rel = id === undefined ? undefined : rels.get(id);
      if (rel && rel.kind === 'worksheet' && !rel.external && pkg.has(rel.target)) {
        sheets.push({ name: normalise(attr(element, 'name') ?? ''), part: rel.target });
      }
    },
  });
  return { sheets, system1904 };
}

interface SheetContext {
  shared: string[];
  dates: WorkbookDates;
  cells: { count: number; padded: number };
}

/** A worksheet's non-empty rows, streamed from its sheetData; every <c> counts against maxCells. */
function readSheet(pkg: OoxmlPackage, part: string, limits: ReaderLimits, context: SheetContext): SheetRow[] {
  const rows: SheetRow[] = [];
  let rowNumber = 0;
  let row: SheetRow | undefined;
  let column = 0;
  // The open cell: one object refilled for every <c> (a sheet may have millions).
  const cell = { column: 0, type: 'n', style: 0, value: '', inline: '' };
  let inCell = false;
  let inValue = false;
  let inInline = 0;
  let inPhonetic = false;
  let inInlineText = false;

  readXmlPart(pkg, part, limits, {
    open(element) {
      switch (element.local) {
        case 'row': {
          const declared = Number(attr(element, 'r'));
          rowNumber = Number.isInteger(declared) && declared > rowNumber ? declared : rowNumber + 1;
          row = { row: rowNumber, columns: [], texts: [] };
          column = 0;
          break;
        }
        case 'c': {
          context.cells.count += 1;
          if (context.cells.count > limits.maxCells) throw tooManyCells(limits);
          const ref = columnOfRef(attr(element, 'r'));
          column = ref !== undefined && ref > column ? ref : column + 1;
          cell.style = Number(attr(element, 's') ?? 0);
          cell.column = column;
          cell.type = attr(element, 't') ?? 'n';
          cell.value = '';
          cell.inline = '';
          inCell = true;
          break;
        }
        case 'v':
          inValue = true;
          break;
        case 'is':
          inInline += 1;
          break;
        case 'rPh':
          inPhonetic = true;
          break;
        case 't':
          inInlineText = inInline > 0;
          break;
      }
    },
    close(local) {
      switch (local) {
        case 'v':
          inValue = false;
          break;
        case 'is':
          inInline -= 1;
          break;
        case 'rPh':
          inPhonetic = false;
          break;
        case 't':
          inInlineText = false;
          break;
        case 'c':
          if (inCell && row) {
            const text = cellText(cell, context.shared, context.dates);
            if (text) {
              row.columns.push(cell.column);
              row.texts.push(text);
            }
          }
          inCell = false;
          break;
        case 'row':
          if (row && row.columns.length > 0) rows.push(row);
          row = undefined;
          break;
      }
    },
    text(text) {
      if (!inCell) return;
      if (inValue) cell.value += text;
      else if (inInlineText && !inPhonetic) cell.inline += text;
    },
  });
  return rows;
}

/** A sheet's rows as parts: the header row, then at most ROWS_PER_PART rows below it in each. */
function sheetParts(
  sheet: string,
  rows: SheetRow[],
  limits: ReaderLimits,
  cells: { count: number; padded: number },
  budget: TextBudget,
): DocumentPart[] {
  const [header, ...body] = rows;
  if (!header) return [];
  // Only the columns that hold a value somewhere: a stray far cell does not widen every row.
  const columns = new Set<number>();
  for (const row of rows) for (const column of row.columns) columns.add(column);
  const used = [...columns].sort((a, b) => a - b);
  cells.padded += rows.length * used.length;
  if (cells.padded > limits.maxCells) throw tooManyCells(limits);
  const first = columnLetters(used[0]!);
  const last = columnLetters(used.at(-1)!);
  // A row's texts under the used columns (its columns are among them, both ascending), blanks between.
  const line = (row: SheetRow) => {
    const texts: string[] = [];
    let next = 0;
    for (const column of used) texts.push(row.columns[next] === column ? row.texts[next++]! : '');
    return texts;
  };
  const headerLine = line(header);
  const parts: DocumentPart[] = [];
  for (let start = 0; start === 0 || start < body.length; start += ROWS_PER_PART) {
    const chunk = body.slice(start, start + ROWS_PER_PART);
    const block = blocks.table([headerLine, ...chunk.map(line)]);
    const part = partOf([block], {
      type: 'sheet',
      sheet,
      range: `${first}${start === 0 ? header.row : chunk[0]!.row}:${last}${(chunk.at(-1) ?? header).row}`,
    });
    budget.spend(part.text.length);
    parts.push({ ...part, rows: [header.row, ...chunk.map((row) => row.row)], columns: [first, last] });
  }
  return parts;
}

const tooManyCells = (limits: ReaderLimits) =>
  new ReadRefused(
    'TOO_COMPLEX',
    `The document is too complex to read: its sheets hold more than ${limits.maxCells} cells.`,
  );
