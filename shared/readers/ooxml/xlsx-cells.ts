// A workbook's cells: references (A1), shared strings, and a cell's cached value as text. Numbers
// read as written; a number whose style formats it as a date or time reads as an ISO date (in the
// workbook's date system, 1900 or 1904; the serial as Excel counts it), since a serial (45292)
// means nothing to a reader.

import { ReadRefused, type ReaderLimits } from '../reader.ts';
import { normalise } from './opc.ts';
import type { OoxmlPackage } from './package.ts';
import { attr, readXmlPart } from './xml.ts';

const MAX_COLUMN = 16_384;

/** 1 → A, 28 → AB. */
export function columnLetters(column: number): string {
  let letters = '';
  for (let rest = column; rest > 0; rest = Math.floor((rest - 1) / 26)) {
    letters = String.fromCharCode(65 + ((rest - 1) % 26)) + letters;
  }
  return letters;
}

/**
 * The column of a cell reference (`AB12` → 28; `$?[A-Za-z]{1,3}$?\d{1,7}`), read without a pattern or a
 * string built (a sheet has a reference on every cell); undefined when it is none or past XFD.
 */
export function columnOfRef(ref: string | undefined): number | undefined {
  if (ref === undefined) return undefined;
  const length = ref.length;
  let k = ref.charCodeAt(0) === 0x24 ? 1 : 0; // $
  let column = 0;
  const lettersStart = k;
  for (; k < length; k++) {
    const code = ref.charCodeAt(k) | 0x20; // lower case
    if (code < 0x61 || code > 0x7a) break;
    column = column * 26 + code - 0x60;
  }
  if (k === lettersStart || k - lettersStart > 3) return undefined;
  if (ref.charCodeAt(k) === 0x24) k++;
  const digitsStart = k;
  for (; k < length; k++) {
    const code = ref.charCodeAt(k);
    if (code < 0x30 || code > 0x39) return undefined;
  }
  if (k === digitsStart || k - digitsStart > 7) return undefined;
  return column <= MAX_COLUMN ? column : undefined;
}

/** xl/sharedStrings.xml: each string item's text (phonetic runs left out); at most maxCells items. */
export function readSharedStrings(pkg: OoxmlPackage, part: string, limits: ReaderLimits): string[] {
  const strings: string[] = [];
  let current: string | undefined;
  let inText = false;
  let inPhonetic = false;
  readXmlPart(pkg, part, limits, {
    open(element) {
      if (element.local === 'si') {
        current = '';
        if (strings.length >= limits.maxCells) {
          throw new ReadRefused(
            'TOO_COMPLEX',
            `The document is too complex to read: it holds more than ${limits.maxCells} strings.`,
          );
        }
      } else if (element.local === 't') inText = true;
      else if (element.local === 'rPh') inPhonetic = true;
    },
    close(local) {
      if (local === 'si') {
        strings.push(normalise(unescapeOoxml(current ?? '')));
        current = undefined;
      } else if (local === 't') inText = false;
      else if (local === 'rPh') inPhonetic = false;
    },
    text(text) {
      if (inText && !inPhonetic && current !== undefined) current += text;
    },
  });
  return strings;
}

/** Built-in number formats that show a date or time. */
const DATE_FORMAT_IDS = new Set([
  14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47,
]);

/** xl/styles.xml: the indexes of the cell styles (cellXfs) whose number format shows a date or time. */
export function readNumberFormats(pkg: OoxmlPackage, part: string, limits: ReaderLimits): Set<number> {
  const customDates = new Set<number>();
  const dateStyles = new Set<number>();
  let inCellXfs = false;
  let index = 0;
  readXmlPart(pkg, part, limits, {
    open(element) {
      if (element.local === 'numFmt') {
        const id = Number(attr(element, 'numFmtId'));
        if (isDateFormat(attr(element, 'formatCode') ?? '')) customDates.add(id);
      } else if (element.local === 'cellXfs') {
        inCellXfs = true;
      } else if (element.local === 'xf' && inCellXfs) {
        const id = Number(attr(element, 'numFmtId') ?? 0);
        if (DATE_FORMAT_IDS.has(id) || customDates.has(id)) dateStyles.add(index);
        index += 1;
      }
    },
    close(local) {
      if (local === 'cellXfs') inCellXfs = false;
    },
  });
  return dateStyles;
}

/** A format code shows a date when, outside quotes, escapes and brackets, it has d, m, y, h or s. */
function isDateFormat(code: string): boolean {
  const bare = code.replace(/"[^"]*"|\\.|\[[^\]]*\]/g, '');
  return /[dmyhs]/i.test(bare.split(';')[0] ?? '');
}

/** How the workbook's date cells read: the styles that format a date, and its date system. */
export interface WorkbookDates {
  styles: Set<number>;
  /** workbookPr date1904: serials count days from 1904-01-01 (Excel for Mac's old default). */
  system1904: boolean;
}

/** A cell's cached value as text ('' when it has none). */
export function cellText(
  cell: { type: string; style: number; value: string; inline: string },
  shared: string[],
  dates: WorkbookDates,
): string {
  const value = cell.value.trim();
  switch (cell.type) {
    case 's':
      return shared[Number(value)] ?? '';
    case 'inlineStr':
      return normalise(unescapeOoxml(cell.inline));
    case 'b':
      return value === '' ? '' : value === '1' || value.toLowerCase() === 'true' ? 'TRUE' : 'FALSE';
    case 'str':
      return normalise(unescapeOoxml(cell.value));
    case 'e':
    case 'd':
      return normalise(cell.value);
    default:
      if (value !== '' && dates.styles.has(cell.style)) return serialDate(Number(value), dates.system1904) ?? value;
      return normalise(value);
  }
}

/** An Excel serial → `YYYY-MM-DD`, `HH:MM[:SS]` or both; undefined when out of range (9999-12-31). */
function serialDate(serial: number, system1904: boolean): string | undefined {
  if (!Number.isFinite(serial) || serial < 0 || serial > (system1904 ? 2_957_003 : 2_958_465)) return undefined;
  const days = Math.floor(serial);
  const seconds = Math.round((serial - days) * 86_400);
  // The 1900 system counts 1900-02-29, which never was: serials from 61 on are a day ahead of the
  // calendar. The 1904 system counts from 1904-01-01 (day 0) without that day.
  const epoch = system1904 ? Date.UTC(1904, 0, 1) : Date.UTC(1899, 11, days >= 61 ? 30 : 31);
  const date = new Date(epoch + days * 86_400_000 + seconds * 1000).toISOString();
  const time = seconds % 60 === 0 ? date.slice(11, 16) : date.slice(11, 19);
  if (days === 0) return time;
  return seconds === 0 ? date.slice(0, 10) : `${date.slice(0, 10)} ${time}`;
}

/** Excel writes characters XML cannot hold as `_xHHHH_` (a carriage return: `_x000D_`). */
function unescapeOoxml(text: string): string {
  return text.includes('_x')
    ? text.replace(/_x([0-9A-Fa-f]{4})_/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    : text;
}
