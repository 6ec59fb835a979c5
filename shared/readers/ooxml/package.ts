// An OOXML package (a zip) opened within its bounds (docs/DECISIONS.md "OOXML readers"). The
// central directory is read first and the package refused (TOO_COMPLEX) when its entry count, the
// sizes its entries declare, or an entry's declared compression ratio pass the reader's limits:
// nothing is inflated before that. An entry is then inflated only when a reader asks for it, by
// zlib with the declared size as its output limit, so an entry whose size lies is stopped the
// moment its output passes it (within one 16 KB step). Macros (vbaProject.bin) are never handed out.

import { inflateRawSync } from 'node:zlib';
import { ReadRefused, type ReaderLimits } from '../reader.ts';

export interface ZipEntry {
  /** The part name as stored (no leading slash). */
  name: string;
  method: number;
  compressedSize: number;
  /** The uncompressed size the central directory declares. */
  size: number;
  localOffset: number;
}

/** Inflated bytes handed to the XML reader at a time. */
const CHUNK = 64 * 1024;
/** Below this declared size an entry's ratio is not judged: small XML parts compress very well. */
const RATIO_FLOOR_BYTES = 1024 * 1024;
const MAX_COMMENT = 0xffff;
const EOCD_SIZE = 22;
const EOCD_SIG = 0x06054b50;
const ZIP64_LOCATOR_SIG = 0x07064b50;
const ZIP64_EOCD_SIG = 0x06064b50;
const CENTRAL_SIG = 0x02014b50;
const LOCAL_SIG = 0x04034b50;
/** Parts that hold macros or signed binary code: never inflated. */
const NEVER_READ = /(^|\/)vba[^/]*\.bin$/i;

const invalid = (message: string) =>
  new ReadRefused('INVALID_DOCUMENT', `The file is not a valid Office document: ${message}.`);
const tooComplex = (message: string) =>
  new ReadRefused('TOO_COMPLEX', `The document is too complex to read: ${message}.`);

/** Is this a zip (a local file header or an empty archive's end record at the start)? */
export function looksLikeZip(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && (bytes[2] === 3 || bytes[2] === 5);
}

export class OoxmlPackage {
  private readonly entries = new Map<string, ZipEntry>();

  private constructor(
    private readonly bytes: Uint8Array,
    list: ZipEntry[],
  ) {
    // Part names compare case-insensitively in OPC; the first of two equal names wins.
    for (const entry of list) {
      const key = entry.name.toLowerCase();
      if (!this.entries.has(key)) this.entries.set(key, entry);
    }
  }

  /** Reads the central directory and checks every bound before anything is inflated. */
  static open(bytes: Uint8Array, limits: ReaderLimits): OoxmlPackage {
    if (!looksLikeZip(bytes)) throw invalid('it is not a zip package');
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const end = findEndRecord(bytes, view);
    let count = view.getUint16(end + 10, true);
    let directorySize = view.getUint32(end + 12, true);
    let directoryOffset = view.getUint32(end + 16, true);
    if (count === 0xffff || directorySize === 0xffffffff || directoryOffset === 0xffffffff) {
      const zip64 = readZip64End(view, end);
      [count, directorySize, directoryOffset] = [zip64.count, zip64.size, zip64.offset];
    }
    if (count > limits.maxEntries) throw tooComplex(`it has ${count} entries (at most ${limits.maxEntries})`);
    if (directoryOffset + directorySize > bytes.length) throw invalid('its central directory lies outside the file');

    const list: ZipEntry[] = [];
    let total = 0;
    let at = directoryOffset;
    for (let k = 0; k < count; k++) {
      if (at + 46 > bytes.length || view.getUint32(at, true) !== CENTRAL_SIG) {
        throw invalid('its central directory is damaged');
      }
      const flags = view.getUint16(at + 8, true);
      const method = view.getUint16(at + 10, true);
      let compressedSize = view.getUint32(at + 20, true);
      let size = view.getUint32(at + 24, true);
      const nameLength = view.getUint16(at + 28, true);
      const extraLength = view.getUint16(at + 30, true);
      const commentLength = view.getUint16(at + 32, true);
      let localOffset = view.getUint32(at + 42, true);
      const next = at + 46 + nameLength + extraLength + commentLength;
      if (next > bytes.length) throw invalid('its central directory is damaged');
      const name = new TextDecoder().decode(bytes.subarray(at + 46, at + 46 + nameLength));
      if (size === 0xffffffff || compressedSize === 0xffffffff || localOffset === 0xffffffff) {
        const wide = readZip64Extra(view, at + 46 + nameLength, extraLength, {
          size: size === 0xffffffff,
          compressed: compressedSize === 0xffffffff,
          offset: localOffset === 0xffffffff,
        });
        size = wide.size ?? size;
        compressedSize = wide.compressed ?? compressedSize;
        localOffset = wide.offset ?? localOffset;
      }
      if (flags & 1) {
        throw new ReadRefused(
          'UNSUPPORTED_TYPE',
          'This package is encrypted with a zip password; remove the password and upload it again.',
        );
      }
      total += size;
      if (total > limits.maxUncompressedBytes) {
        throw tooComplex(`its entries declare more than ${limits.maxUncompressedBytes} bytes uncompressed`);
      }
      if (size > RATIO_FLOOR_BYTES && size / Math.max(1, compressedSize) > limits.maxCompressionRatio) {
        throw tooComplex(`the entry ${name} declares a compression ratio over ${limits.maxCompressionRatio}`);
      }
      list.push({ name, method, compressedSize, size, localOffset });
      at = next;
    }
    return new OoxmlPackage(bytes, list);
  }

  /** Part names as stored, in directory order. */
  names(): string[] {
    return [...this.entries.values()].map((entry) => entry.name);
  }

  has(name: string): boolean {
    return this.entryOf(name) !== undefined;
  }

  /**
   * The entry's inflated bytes, chunk by chunk. zlib inflates with the declared size as its
   * output limit and stops (TOO_COMPLEX) as soon as its output passes it: a size that lies costs
   * one step of output, never the stream.
   */
  *chunks(name: string): Generator<Uint8Array> {
    const bytes = this.bytesOf(name);
    for (let at = 0; at < bytes.length; at += CHUNK) yield bytes.subarray(at, at + CHUNK);
  }

  /** The entry's whole inflated bytes (at most its declared size). */
  bytesOf(name: string): Uint8Array {
    const entry = this.entryOf(name);
    if (!entry) throw invalid(`the part ${name} is missing`);
    const data = this.dataOf(entry);
    if (entry.method === 0) {
      if (entry.compressedSize !== entry.size) throw invalid(`the stored part ${entry.name} has two sizes`);
      return data;
    }
    if (entry.method !== 8) throw invalid(`the part ${entry.name} uses compression method ${entry.method}`);
    let out: Uint8Array;
    try {
      out = inflateRawSync(data, { maxOutputLength: Math.max(1, entry.size) });
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
        throw tooComplex(`the part ${entry.name} inflates past the size it declares`);
      }
      throw invalid(`the part ${entry.name} does not inflate`);
    }
    if (out.length > entry.size) throw tooComplex(`the part ${entry.name} inflates past the size it declares`);
    return out;
  }

  private entryOf(name: string): ZipEntry | undefined {
    const key = name.replace(/^\/+/, '').toLowerCase();
    return NEVER_READ.test(key) ? undefined : this.entries.get(key);
  }

  /** The entry's compressed bytes, found through its local header. */
  private dataOf(entry: ZipEntry): Uint8Array {
    const at = entry.localOffset;
    const view = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
    if (at + 30 > this.bytes.length || view.getUint32(at, true) !== LOCAL_SIG) {
      throw invalid(`the part ${entry.name} has no local header`);
    }
    const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
    if (start + entry.compressedSize > this.bytes.length) throw invalid(`the part ${entry.name} is cut short`);
    return this.bytes.subarray(start, start + entry.compressedSize);
  }
}

function findEndRecord(bytes: Uint8Array, view: DataView): number {
  const lowest = Math.max(0, bytes.length - EOCD_SIZE - MAX_COMMENT);
  for (let at = bytes.length - EOCD_SIZE; at >= lowest; at--) {
    if (view.getUint32(at, true) === EOCD_SIG) return at;
  }
  throw invalid('it has no zip end record');
}

function readZip64End(view: DataView, end: number): { count: number; size: number; offset: number } {
  const locator = end - 20;
  if (locator < 0 || view.getUint32(locator, true) !== ZIP64_LOCATOR_SIG) throw invalid('its zip64 locator is missing');
  const at = safeNumber(view.getBigUint64(locator + 8, true));
  if (at + 56 > view.byteLength || view.getUint32(at, true) !== ZIP64_EOCD_SIG) {
    throw invalid('its zip64 end record is missing');
  }
  return {
    count: safeNumber(view.getBigUint64(at + 32, true)),
    size: safeNumber(view.getBigUint64(at + 40, true)),
    offset: safeNumber(view.getBigUint64(at + 48, true)),
  };
}

/** The zip64 extra field (id 1): the 64-bit values of the fields that were 0xffffffff, in order. */
function readZip64Extra(
  view: DataView,
  start: number,
  length: number,
  wanted: { size: boolean; compressed: boolean; offset: boolean },
): { size?: number; compressed?: number; offset?: number } {
  for (let at = start; at + 4 <= start + length; ) {
    const id = view.getUint16(at, true);
    const fieldLength = view.getUint16(at + 2, true);
    if (id === 1) {
      let field = at + 4;
      const take = () => {
        if (field + 8 > at + 4 + fieldLength) throw invalid('its zip64 field is cut short');
        const value = safeNumber(view.getBigUint64(field, true));
        field += 8;
        return value;
      };
      const size = wanted.size ? take() : undefined;
      const compressed = wanted.compressed ? take() : undefined;
      const offset = wanted.offset ? take() : undefined;
      return { size, compressed, offset };
    }
    at += 4 + fieldLength;
  }
  throw invalid('its zip64 field is missing');
}

/** A 64-bit size as a number; past 2^53 it is no real size (it still fails the size bound). */
function safeNumber(value: bigint): number {
  return value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value);
}
