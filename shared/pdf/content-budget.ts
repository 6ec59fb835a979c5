import { constants as bufferConstants } from 'node:buffer';
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

const STREAM_KEYWORD = /\bstream(?:\r\n|\r|\n)/g;
const OBJECT_HEADER = /(\d+)\s+(\d+)\s+obj\b/g;
const REFERENCE = /(\d+)\s+(\d+)\s+R\b/g;
const LOOKBACK = 64 * 1024;

/** The object header ("12 0") and dictionary text before a `stream` keyword. */
function streamHeader(text: string, at: number): { key?: string; dict: string } {
  const from = Math.max(0, at - LOOKBACK);
  const objAt = text.lastIndexOf('obj', at);
  if (objAt < from) return { dict: text.slice(Math.max(from, at - 4096), at) };
  const before = text.slice(Math.max(0, objAt - 40), objAt + 3);
  let key: string | undefined;
  for (const m of before.matchAll(OBJECT_HEADER)) key = `${m[1]} ${m[2]}`;
  return { key, dict: text.slice(objAt + 3, at) };
}

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

/** Measures the document's streams; throws TOO_COMPLEX when one of the limits is exceeded. */
export function checkContentBudget(pdf: Uint8Array, limits: ContentLimits): ContentReport {
  const bytes = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  const text = bytes.toString('latin1');
  const decodedSize = new Map<string, number>();
  const unnamed: number[] = [];
  const objectStreams: string[] = [];
  let cmapCodes = 0;
  let streams = 0;

  for (const m of text.matchAll(STREAM_KEYWORD)) {
    const start = m.index + m[0].length;
    const end = text.indexOf('endstream', start);
    let stop = end < 0 ? bytes.length : end;
    if (bytes[stop - 1] === 0x0a) stop--; // the end-of-line before `endstream` is not data
    if (bytes[stop - 1] === 0x0d) stop--;
    const data = bytes.subarray(start, Math.max(start, stop));
    const { key, dict } = streamHeader(text, m.index);
    if (isImage(dict)) continue;
    streams++;
    const decoded = isFlate(dict) ? inflate(data, limits.maxStreamBytes) : data;
    const size = decoded?.length ?? data.length;
    if (size > limits.maxStreamBytes)
      throw tooComplex(`a stream expands to more than ${Math.round(limits.maxStreamBytes / MiB)} MB`);
    if (key) decodedSize.set(key, size);
    else unnamed.push(size);
    if (!decoded) continue;
    if (isObjectStream(dict)) objectStreams.push(decoded.toString('latin1'));
    if (decoded.includes('beginbfrange') || decoded.includes('begincidrange')) {
      cmapCodes += cmapRangeCodes(decoded.toString('latin1'));
      if (cmapCodes > limits.maxCmapCodes) throw tooComplex(`its CMaps map more than ${limits.maxCmapCodes} codes`);
    }
  }

  // How often each stream is referred to: in the file and inside its object streams.
  const references = new Map<string, number>();
  for (const source of [text, ...objectStreams]) {
    for (const m of source.matchAll(REFERENCE)) {
      const key = `${m[1]} ${m[2]}`;
      if (decodedSize.has(key)) references.set(key, (references.get(key) ?? 0) + 1);
    }
  }
  let contentBytes = unnamed.reduce((a, b) => a + b, 0);
  for (const [key, size] of decodedSize) contentBytes += size * Math.max(1, references.get(key) ?? 0);
  if (contentBytes > limits.maxContentBytes) {
    throw tooComplex(`its content expands to more than ${Math.round(limits.maxContentBytes / MiB)} MB`);
  }
  return { streams, contentBytes, cmapCodes };
}

/**
 * Refuses, before anything is decoded, a document holding an image larger than `maxPixels`
 * (width × height from its dictionary): drawing decodes each image whole, whatever the size it
 * is drawn at (docs/DECISIONS.md, OCR bounds). Dimensions given by reference are left to pdf.js's
 * own `maxImageSize`, which drops such an image instead of decoding it.
 */
export function checkImageBudget(pdf: Uint8Array, maxPixels: number): void {
  const text = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength).toString('latin1');
  for (const m of text.matchAll(STREAM_KEYWORD)) {
    const { dict } = streamHeader(text, m.index);
    if (!isImage(dict)) continue;
    const width = directNumber(dict, 'Width');
    const height = directNumber(dict, 'Height');
    if (width !== undefined && height !== undefined && width * height > maxPixels)
      throw tooComplex(`an image of ${width}×${height} pixels is larger than ${maxPixels} pixels`);
  }
}

/** A dictionary entry given as a number (not a reference). */
function directNumber(dict: string, key: string): number | undefined {
  const m = new RegExp(`/${key}\\s+(\\d+)(\\s+\\d+\\s+R\\b)?`).exec(dict);
  return m && !m[2] ? Number(m[1]) : undefined;
}
