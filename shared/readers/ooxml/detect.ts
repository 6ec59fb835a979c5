// What an Office file is, read from its bytes (docs/DECISIONS.md "OOXML readers"): a package's
// main part content type names the format (the macro-enabled and template forms read like the
// plain ones, their macros never read); an OLE compound file is either an encrypted package or a
// legacy binary document, both refused with a message that says what to do.

import { DEFAULT_READER_LIMITS, ReadRefused, type ReaderLimits } from '../reader.ts';
import { firstOfKind, readContentTypes, readRelationships } from './opc.ts';
import { looksLikeZip, OoxmlPackage } from './package.ts';

export type OoxmlFormat = 'docx' | 'pptx' | 'xlsx';

const MAIN_TYPES: Record<string, OoxmlFormat> = {
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml': 'docx',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml': 'docx',
  'application/vnd.ms-word.document.macroenabled.main+xml': 'docx',
  'application/vnd.ms-word.template.macroenabledtemplate.main+xml': 'docx',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml': 'pptx',
  'application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml': 'pptx',
  'application/vnd.openxmlformats-officedocument.presentationml.template.main+xml': 'pptx',
  'application/vnd.ms-powerpoint.presentation.macroenabled.main+xml': 'pptx',
  'application/vnd.ms-powerpoint.slideshow.macroenabled.main+xml': 'pptx',
  'application/vnd.ms-powerpoint.template.macroenabled.main+xml': 'pptx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml': 'xlsx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.template.main+xml': 'xlsx',
  'application/vnd.ms-excel.sheet.macroenabled.main+xml': 'xlsx',
  'application/vnd.ms-excel.template.macroenabled.main+xml': 'xlsx',
};

const BINARY_WORKBOOK = 'application/vnd.ms-excel.sheet.binary.macroenabled.main';

const FORMAT_NAMES: Record<OoxmlFormat, string> = {
  docx: 'a Word document (.docx)',
  pptx: 'a PowerPoint presentation (.pptx)',
  xlsx: 'an Excel workbook (.xlsx)',
};

export interface OpenedDocument {
  pkg: OoxmlPackage;
  format: OoxmlFormat;
  /** The main part's name (`word/document.xml`, `ppt/presentation.xml`, `xl/workbook.xml`, …). */
  mainPart: string;
}

/** Opens a package (its bounds checked) and finds its main part and format; undefined when it has none. */
export function openOoxml(bytes: Uint8Array, limits: ReaderLimits): OpenedDocument | undefined {
  const pkg = OoxmlPackage.open(bytes, limits);
  if (!pkg.has('[Content_Types].xml')) return undefined;
  const types = readContentTypes(pkg, limits);
  const fromRels = firstOfKind(pkg, readRelationships(pkg, '', limits), 'officeDocument');
  const candidates = fromRels ? [fromRels] : [...types.keys()];
  for (const mainPart of candidates) {
    const type = types.get(mainPart.toLowerCase()) ?? '';
    if (type === BINARY_WORKBOOK) {
      throw new ReadRefused(
        'UNSUPPORTED_TYPE',
        'This file is a binary Excel workbook (.xlsb); save it as .xlsx and upload it again.',
      );
    }
    const format = MAIN_TYPES[type];
    if (format && pkg.has(mainPart)) return { pkg, format, mainPart };
  }
  return undefined;
}

/**
 * The OOXML format of these bytes, or undefined when they are no zip or a zip without an Office
 * main part. A zip that cannot be opened within the bounds throws its ReadRefused here already
 * (TOO_COMPLEX before anything is inflated; INVALID_DOCUMENT when damaged or declaring a DTD).
 */
export function detectOoxml(bytes: Uint8Array, limits: ReaderLimits = DEFAULT_READER_LIMITS): OoxmlFormat | undefined {
  return looksLikeZip(bytes) ? openOoxml(bytes, limits)?.format : undefined;
}

/** Opens the package a reader of `format` was given, or refuses it saying what it is. */
export function openAs(bytes: Uint8Array, limits: ReaderLimits, format: OoxmlFormat): OpenedDocument {
  const cfb = detectCfb(bytes);
  if (cfb) throw cfb;
  const opened = openOoxml(bytes, limits);
  if (!opened) {
    throw new ReadRefused('INVALID_DOCUMENT', `The file is not ${FORMAT_NAMES[format]}: it has no Office main part.`);
  }
  if (opened.format !== format) {
    throw new ReadRefused(
      'UNSUPPORTED_TYPE',
      `The file is ${FORMAT_NAMES[opened.format]}, not ${FORMAT_NAMES[format]}; upload it as what it is.`,
    );
  }
  return opened;
}

const CFB_SIGNATURE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
/** Directory sectors followed at most (4 entries each at 512 bytes, 32 at 4096). */
const MAX_DIRECTORY_SECTORS = 64;
const END_OF_CHAIN = 0xfffffffe;

/**
 * An OLE compound file (the container of legacy .doc/.xls/.ppt and of encrypted OOXML) →
 * the refusal that says what it is and what to do; undefined for any other bytes.
 */
export function detectCfb(bytes: Uint8Array): ReadRefused | undefined {
  if (bytes.length < 512 || CFB_SIGNATURE.some((byte, k) => bytes[k] !== byte)) return undefined;
  const names = new Set(cfbDirectoryNames(bytes).map((name) => name.toLowerCase()));
  if (names.has('encryptedpackage') || names.has('encryptioninfo')) {
    return new ReadRefused(
      'UNSUPPORTED_TYPE',
      'This file is a password-protected (encrypted) Office document; remove the password and upload it again.',
    );
  }
  const legacy: [string, string][] = [
    ['worddocument', 'a legacy Word document (.doc); save it as .docx'],
    ['workbook', 'a legacy Excel workbook (.xls); save it as .xlsx'],
    ['book', 'a legacy Excel workbook (.xls); save it as .xlsx'],
    ['powerpoint document', 'a legacy PowerPoint presentation (.ppt); save it as .pptx'],
  ];
  for (const [stream, what] of legacy) {
    if (names.has(stream)) return new ReadRefused('UNSUPPORTED_TYPE', `This file is ${what} and upload it again.`);
  }
  return new ReadRefused(
    'UNSUPPORTED_TYPE',
    'This file is an OLE compound file (an old Office or Windows format), not a document read here; save it as .docx, .xlsx, .pptx or PDF and upload it again.',
  );
}

/** The names in a compound file's directory: the header, the FAT sectors it lists, the directory chain. */
function cfbDirectoryNames(bytes: Uint8Array): string[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const shift = view.getUint16(30, true);
  if (shift !== 9 && shift !== 12) return [];
  const sectorSize = 1 << shift;
  const sectorAt = (sector: number) => (sector + 1) * sectorSize;
  const fatSectorCount = Math.min(109, view.getUint32(44, true));
  const perFatSector = sectorSize / 4;
  const nextSector = (sector: number): number => {
    const fatIndex = Math.floor(sector / perFatSector);
    if (fatIndex >= fatSectorCount) return END_OF_CHAIN;
    const fatSector = view.getUint32(76 + fatIndex * 4, true);
    const at = sectorAt(fatSector) + (sector % perFatSector) * 4;
    return at + 4 <= bytes.length ? view.getUint32(at, true) : END_OF_CHAIN;
  };
  const names: string[] = [];
  const seen = new Set<number>();
  let sector = view.getUint32(48, true);
  while (sector < 0xfffffffa && !seen.has(sector) && seen.size < MAX_DIRECTORY_SECTORS) {
    seen.add(sector);
    const start = sectorAt(sector);
    if (start + sectorSize > bytes.length) break;
    for (let entry = start; entry < start + sectorSize; entry += 128) {
      const length = view.getUint16(entry + 64, true);
      if (length < 2 || length > 64) continue;
      names.push(new TextDecoder('utf-16le').decode(bytes.subarray(entry, entry + length - 2)));
    }
    sector = nextSector(sector);
  }
  return names;
}
