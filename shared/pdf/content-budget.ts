import { constants as bufferConstants } from 'node:buffer';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { constants, inflateSync } from 'node:zlib';
import { PermanentFailure } from '../files/failures.ts';

// A look at a PDF's streams before pdf.js reads it, to refuse in milliseconds what would cost
// pdf.js seconds or gigabytes (docs/DECISIONS.md, Hostile documents). pdf.js has no option to cap
// how many bytes it inflates or how large a CMap may be, so this pass measures them itself, on the
// raw bytes:
//   - every stream pdf.js may decode to read text (content streams, forms, fonts, CMaps, object
//     streams; not images, which text extraction never decodes) is inflated with zlib under a
//     cap, and its size is weighted by how many times the file refers to it (20 pages sharing
//     one stream make pdf.js parse it 20 times);
//   - CMaps (ToUnicode and embedded encodings) have the codes of their ranges counted: a few
//     ranges of 2^24 codes make pdf.js build arrays that take gigabytes or abort the process.
// It is a fast path, not the bound: a document that slips through still meets the extraction
// child's heap, RSS and time limits (bounded-extract.ts). A stream it cannot decode is left to
// pdf.js, which reads damaged files leniently.

export interface ContentLimits {
  /** Largest decoded size of one stream. */
  maxStreamBytes: number;
  /** Largest decoded size of all streams, each weighted by its references. */
  maxContentBytes: number;
  /** Most codes all CMap ranges of the document may map. */
  maxCmapCodes: number;
}

interface ContentReport {
  streams: number;
  /** Decoded bytes, weighted by references. */
  contentBytes: number;
  cmapCodes: number;
}

const MiB = 1024 * 1024;
const tooComplex = (what: string) => new PermanentFailure('TOO_COMPLEX', `The PDF is too complex to process: ${what}`);

const OBJECT_HEADER = /(\d+)\s+(\d+)\s+obj\b/g;
const REFERENCE = /(\d+)\s+(\d+)\s+R\b/g;
const LOOKBACK = 64 * 1024;

const isFlate = (dict: string) =>
  /\/Filter\s*(?:\[\s*)?\/(?:FlateDecode|Fl)\b/.test(dict) && !/\/Filter\s*\[[^\]]*\/\w+[^\]]*\/\w+/.test(dict);
const isImage = (dict: string) => /\/Subtype\s*\/Image\b/.test(dict);
const isObjectStream = (dict: string) => /\/Type\s*\/ObjStm\b/.test(dict);

function inflate(data: Buffer, limit: number): Buffer | undefined {
  try {
    // Sync flush: a truncated stream gives what it has, as pdf.js would read it.
    return inflateSync(data, {
      finishFlush: constants.Z_SYNC_FLUSH,
      maxOutputLength: Math.min(limit + 1, bufferConstants.MAX_LENGTH),
    });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw tooComplex(`a stream expands to more than ${Math.round(limit / MiB)} MB`);
    }
    return undefined; // not valid deflate data: pdf.js decides what to make of it
  }
}

/** Codes mapped by the ranges of a CMap (bfrange and cidrange blocks). */
export function cmapRangeCodes(cmap: string): number {
  let codes = 0;
  for (const block of cmap.matchAll(/begin(?:bf|cid)range([\s\S]*?)end(?:bf|cid)range/g)) {
    const tokens = block[1]!.match(/<[0-9A-Fa-f\s]*>|\[|\]|-?\d+/g) ?? [];
    for (let i = 0; i + 2 < tokens.length; ) {
      const lo = tokens[i]!;
      const hi = tokens[i + 1]!;
      if (!lo.startsWith('<') || !hi.startsWith('<')) {
        i++;
        continue;
      }
      const value = (t: string) => Number.parseInt(t.slice(1, -1).replace(/\s/g, '').slice(-12) || '0', 16);
      codes += Math.max(0, value(hi) - value(lo) + 1);
      i += 2;
      if (tokens[i] === '[') {
        while (i < tokens.length && tokens[i] !== ']') i++;
      }
      i++;
    }
  }
  return codes;
}

/**
 * Where the PDF's bytes are: in memory, or a file read in windows (docs/DECISIONS.md, Large PDFs:
 * nothing holds the whole file).
 */
interface ByteSource {
  size: number;
  /** Bytes at `offset` (fewer at the end of the file); read into `into` when given and large enough. */
  read(offset: number, length: number, into?: Buffer): Buffer;
}

const bufferSource = (pdf: Uint8Array): ByteSource => {
  const bytes = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  return { size: bytes.length, read: (offset, length) => bytes.subarray(offset, offset + length) };
};

/** Runs `use` on the PDF's bytes: `pdf` itself, or the file at the path `pdf`, opened for the call. */
function withSource<T>(pdf: Uint8Array | string, use: (source: ByteSource) => T): T {
  if (typeof pdf !== 'string') return use(bufferSource(pdf));
  const fd = openSync(pdf, 'r');
  try {
    const size = fstatSync(fd).size;
    return use({
      size,
      read(offset, length, into) {
        const wanted = Math.max(0, Math.min(length, size - offset));
        const out = into && into.length >= wanted ? into.subarray(0, wanted) : Buffer.allocUnsafe(wanted);
        let done = 0;
        while (done < out.length) {
          const n = readSync(fd, out, done, out.length - done, offset + done);
          if (n === 0) break;
          done += n;
        }
        return out.subarray(0, done);
      },
    });
  } finally {
    closeSync(fd);
  }
}

/** Bytes of the file read at once; each window is read with the LOOKBACK before it. */
export const WINDOW_BYTES = 4 * MiB;
/** Read past a window's end, so that a keyword or reference starting in it is whole. */
const WINDOW_TAIL = 64;

/**
 * The file's windows, read into one reused buffer (no large string is made: a window's garbage
 * would pile up before a collection): `[from, to)` is the window's own range in `buf` (a match is
 * handled by the window it starts in); `buf` starts up to LOOKBACK before it (for headers) and ends
 * a little after. `base` is the file offset of `buf[0]`.
 */
function* windows(
  source: ByteSource,
  windowBytes: number,
): Generator<{ buf: Buffer; base: number; from: number; to: number }> {
  const reused = Buffer.allocUnsafe(Math.min(source.size, LOOKBACK + windowBytes + WINDOW_TAIL));
  for (let start = 0; start < source.size; start += windowBytes) {
    const base = Math.max(0, start - LOOKBACK);
    const end = Math.min(source.size, start + windowBytes);
    const buf = source.read(base, Math.min(source.size, end + WINDOW_TAIL) - base, reused);
    yield { buf, base, from: start - base, to: end - base };
  }
}

const STREAM = Buffer.from('stream');
const ENDSTREAM = Buffer.from('endstream');
const isWordByte = (b: number | undefined) =>
  b !== undefined && ((b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x5f);
const isDigit = (b: number | undefined) => b !== undefined && b >= 0x30 && b <= 0x39;
/** `\s` of a regular expression, on latin1 bytes. */
const isSpace = (b: number | undefined) => b !== undefined && (b === 0x20 || (b >= 0x09 && b <= 0x0d) || b === 0xa0);

/** Where each `stream` keyword (`\bstream` and an end-of-line) of `buf[from, to)` starts, and its length. */
function* streamKeywords(buf: Buffer, from: number, to: number): Generator<{ at: number; length: number }> {
  for (let at = buf.indexOf(STREAM, from); at >= 0 && at < to; at = buf.indexOf(STREAM, at + 1)) {
    if (isWordByte(buf[at - 1])) continue;
    const eol = at + STREAM.length;
    if (buf[eol] === 0x0d) yield { at, length: buf[eol + 1] === 0x0a ? 8 : 7 };
    else if (buf[eol] === 0x0a) yield { at, length: 7 };
  }
}

/** The object header ("12 0") and dictionary text before a `stream` keyword at `at` of `buf`. */
function streamHeaderAt(buf: Buffer, at: number): { key?: string; dict: string } {
  const from = Math.max(0, at - LOOKBACK);
  const objAt = buf.lastIndexOf('obj', at);
  if (objAt < from) return { dict: buf.toString('latin1', Math.max(from, at - 4096), at) };
  const before = buf.toString('latin1', Math.max(0, objAt - 40), objAt + 3);
  let key: string | undefined;
  for (const m of before.matchAll(OBJECT_HEADER)) key = `${m[1]} ${m[2]}`;
  return { key, dict: buf.toString('latin1', objAt + 3, at) };
}

/**
 * The references (`12 0 R`) whose `R` is in `buf[from, to)`, as keys ("12 0"): what REFERENCE
 * matches, read backwards from each `R`.
 */
function* referencesIn(buf: Buffer, from: number, to: number): Generator<string> {
  for (let r = buf.indexOf(0x52, from); r >= 0 && r < to; r = buf.indexOf(0x52, r + 1)) {
    if (isWordByte(buf[r + 1])) continue;
    let i = r - 1;
    if (!isSpace(buf[i])) continue;
    while (isSpace(buf[i])) i--;
    const genEnd = i + 1;
    while (isDigit(buf[i])) i--;
    const genStart = i + 1;
    if (genStart === genEnd || !isSpace(buf[i])) continue;
    while (isSpace(buf[i])) i--;
    const numEnd = i + 1;
    while (isDigit(buf[i])) i--;
    const numStart = i + 1;
    if (numStart === numEnd) continue;
    yield `${buf.toString('latin1', numStart, numEnd)} ${buf.toString('latin1', genStart, genEnd)}`;
  }
}

/**
 * Where the stream whose data starts at `start` ends (its `endstream`, or the end of the file),
 * looked for in steps; undefined when its data is longer than `limit` bytes.
 */
function streamEnd(source: ByteSource, start: number, limit: number): number | undefined {
  const step = Math.min(MiB, limit + ENDSTREAM.length);
  for (let at = start; at < source.size; at += step - ENDSTREAM.length) {
    const chunk = source.read(at, step);
    const found = chunk.indexOf(ENDSTREAM);
    if (found >= 0) return at + found - start > limit ? undefined : at + found;
    if (at + chunk.length - start > limit + ENDSTREAM.length) return undefined;
    if (at + chunk.length >= source.size) break;
  }
  return source.size - start > limit ? undefined : source.size;
}

/**
 * Measures the document's streams; throws TOO_COMPLEX when one of the limits is exceeded. `pdf`
 * is the bytes or the path of a file, read in windows of `windowBytes`: memory holds a window and
 * the stream being measured (at most `maxStreamBytes` raw and decoded), whatever the file's size.
 * A stream whose raw data is longer than `maxStreamBytes` is refused without being read.
 */
export function checkContentBudget(
  pdf: Uint8Array | string,
  limits: ContentLimits,
  windowBytes = WINDOW_BYTES,
): ContentReport {
  return withSource(pdf, (source) => measureStreams(source, limits, windowBytes));
}

function measureStreams(source: ByteSource, limits: ContentLimits, windowBytes: number): ContentReport {
  const decodedSize = new Map<string, number>();
  const unnamed: number[] = [];
  const objectStreams: string[] = [];
  let cmapCodes = 0;
  let streams = 0;
  const tooLong = () => tooComplex(`a stream expands to more than ${Math.round(limits.maxStreamBytes / MiB)} MB`);
  const limit = limits.maxStreamBytes + 2; // and the end-of-line before `endstream`

  for (const { buf, base, from, to } of windows(source, windowBytes)) {
    for (const keyword of streamKeywords(buf, from, to)) {
      const { key, dict } = streamHeaderAt(buf, keyword.at);
      if (isImage(dict)) continue;
      streams++;
      const start = base + keyword.at + keyword.length;
      const local = buf.indexOf(ENDSTREAM, keyword.at + keyword.length);
      const end = local < 0 ? streamEnd(source, start, limit) : base + local - start > limit ? undefined : base + local;
      if (end === undefined) throw tooLong();
      const raw = source.read(start, end - start);
      let stop = raw.length;
      if (raw[stop - 1] === 0x0a) stop--; // the end-of-line before `endstream` is not data
      if (raw[stop - 1] === 0x0d) stop--;
      const data = raw.subarray(0, stop);
      const decoded = isFlate(dict) ? inflate(data, limits.maxStreamBytes) : data;
      const size = decoded?.length ?? data.length;
      if (size > limits.maxStreamBytes) throw tooLong();
      if (key) decodedSize.set(key, size);
      else unnamed.push(size);
      if (!decoded) continue;
      if (isObjectStream(dict)) objectStreams.push(decoded.toString('latin1'));
      if (decoded.includes('beginbfrange') || decoded.includes('begincidrange')) {
        cmapCodes += cmapRangeCodes(decoded.toString('latin1'));
        if (cmapCodes > limits.maxCmapCodes) throw tooComplex(`its CMaps map more than ${limits.maxCmapCodes} codes`);
      }
    }
  }

  // How often each stream is referred to: in the file and inside its object streams.
  const references = new Map<string, number>();
  const count = (key: string) => {
    if (decodedSize.has(key)) references.set(key, (references.get(key) ?? 0) + 1);
  };
  for (const { buf, from, to } of windows(source, windowBytes))
    for (const key of referencesIn(buf, from, to)) count(key);
  for (const text of objectStreams) for (const m of text.matchAll(REFERENCE)) count(`${m[1]} ${m[2]}`);
  let contentBytes = unnamed.reduce((a, b) => a + b, 0);
  for (const [key, size] of decodedSize) contentBytes += size * Math.max(1, references.get(key) ?? 0);
  if (contentBytes > limits.maxContentBytes) {
    throw tooComplex(`its content expands to more than ${Math.round(limits.maxContentBytes / MiB)} MB`);
  }
  return { streams, contentBytes, cmapCodes };
}
