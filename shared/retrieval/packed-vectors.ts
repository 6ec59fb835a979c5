// One file's embeddings packed in one S3 object, so a question ranks 10,000 chunks from memory
// instead of reading 10,000 DynamoDB items (the target: top-8 in ≤ 100 ms). Each vector is stored
// as int8 with its own scale (v ≈ scale · q) and its float norm: a quarter of float32's size,
// and a ranking error far below the gap between relevant and irrelevant passages. The exact
// float32 vectors stay in the chunk items; retrieval re-scores the few candidates with them.
//
// Layout, little-endian: "PVEC", u32 version, u32 count, u32 dimensions, then u32 chunk[count],
// u32 page[count], f32 scale[count], f32 norm[count], i8 data[count × dimensions].
// Version 2 adds the file's lexical index (lexical-index.ts) after the vectors, at the next
// multiple of 4: u32 terms version (0: no index), u32 postings, u32 docLen[count],
// u32 termStart[count + 1], u32 terms[postings], u8 tf[postings]. Version 1 objects (files
// ingested before the lexical index) still decode, without one: they are searched dense only.
// A pack of 0 dimensions holds a lexical index alone (its rows' vectors are in S3 Vectors,
// vector-store.ts): it must have one.

import { int8Dots } from './int8-dots.ts';
import { buildLexicalIndex, concatLexical, lexicalByteLength, type LexicalIndex } from './lexical-index.ts';

const MAGIC = 0x43455650; // "PVEC" read as a little-endian u32
const VERSION = 2;
const HEADER = 16;
const align4 = (n: number) => (n + 3) & ~3;

export interface PackedVectors {
  count: number;
  dimensions: number;
  chunk: Uint32Array;
  page: Uint32Array;
  scale: Float32Array;
  norm: Float32Array;
  data: Int8Array;
  /** The BM25 index of the same rows (absent in version 1 objects). */
  lexical?: LexicalIndex;
}

interface VectorRow {
  chunk: number;
  page: number;
  vector: Float32Array;
  /** The chunk's text: when every row has one, the pack carries a lexical index. */
  text?: string;
}

/** Bytes a pack holds in memory (for the retrieval cache). */
export const packedByteLength = (p: PackedVectors) =>
  p.data.byteLength + p.count * 16 + (p.lexical ? lexicalByteLength(p.lexical) : 0);

function emptyPack(count: number, dimensions: number): PackedVectors {
  return {
    count,
    dimensions,
    chunk: new Uint32Array(count),
    page: new Uint32Array(count),
    scale: new Float32Array(count),
    norm: new Float32Array(count),
    data: new Int8Array(count * dimensions),
  };
}

/**
 * Packs float vectors (any order; kept as given). `lexical`: the rows' lexical index when the
 * caller built it already (buildLexicalIndex of the rows' texts, in row order).
 */
export function packVectors(rows: VectorRow[], dimensions: number, lexical?: LexicalIndex): PackedVectors {
  const count = rows.length;
  const packed = emptyPack(count, dimensions);
  rows.forEach((row, i) => {
    if (row.vector.length !== dimensions)
      throw new Error(`vector ${row.chunk} has ${row.vector.length} dimensions, expected ${dimensions}`);
    let maxAbs = 0;
    let sq = 0;
    for (const v of row.vector) {
      const a = Math.abs(v);
      if (a > maxAbs) maxAbs = a;
      sq += v * v;
    }
    const scale = maxAbs > 0 ? maxAbs / 127 : 1;
    const offset = i * dimensions;
    for (let d = 0; d < dimensions; d++) packed.data[offset + d] = Math.round(row.vector[d]! / scale);
    packed.chunk[i] = row.chunk;
    packed.page[i] = row.page;
    packed.scale[i] = scale;
    packed.norm[i] = Math.sqrt(sq);
  });
  if (lexical) packed.lexical = lexical;
  else if (count > 0 && rows.every((r) => typeof r.text === 'string'))
    packed.lexical = buildLexicalIndex(rows.map((r) => r.text!));
  return packed;
}

/** The rows' lexical index alone, in a pack of 0 dimensions (their vectors are stored elsewhere). */
export function lexicalPack(
  rows: { chunk: number; page: number; text: string }[],
  lexical?: LexicalIndex,
): PackedVectors {
  const packed = emptyPack(rows.length, 0);
  rows.forEach((row, i) => {
    packed.chunk[i] = row.chunk;
    packed.page[i] = row.page;
    packed.scale[i] = 1;
  });
  packed.lexical = lexical ?? buildLexicalIndex(rows.map((r) => r.text));
  return packed;
}

export function encodePacked(p: PackedVectors): Buffer {
  const vectorsEnd = HEADER + p.count * 16 + p.count * p.dimensions;
  const lex = p.lexical;
  const postings = lex?.terms.length ?? 0;
  const size = align4(vectorsEnd) + 8 + (lex ? (p.count * 2 + 1 + postings) * 4 + postings : 0);
  const out = Buffer.alloc(size);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(VERSION, 4);
  out.writeUInt32LE(p.count, 8);
  out.writeUInt32LE(p.dimensions, 12);
  let at = HEADER;
  const put = (arr: ArrayBufferView) => {
    Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength).copy(out, at);
    at += arr.byteLength;
  };
  for (const arr of [p.chunk, p.page, p.scale, p.norm, p.data]) put(arr);
  at = align4(at);
  out.writeUInt32LE(lex?.version ?? 0, at);
  out.writeUInt32LE(postings, at + 4);
  at += 8;
  if (lex) for (const arr of [lex.docLen, lex.termStart, lex.terms, lex.tf]) put(arr);
  return out;
}

/**
 * Bytes that are not a whole, consistent pack (cut short, overwritten, another format): the file
 * must be ingested again. Every way decoding can fail is this error, found before any search runs.
 */
export class DamagedPackError extends Error {
  override name = 'DamagedPackError';
}

export function decodePacked(bytes: Uint8Array): PackedVectors {
  const damaged = (why: string) => new DamagedPackError(`Packed vectors object ${why}`);
  // Copy into a fresh, aligned buffer: typed-array views need 4-byte alignment.
  const buf = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(buf).set(bytes);
  const view = new DataView(buf);
  if (bytes.byteLength < HEADER || view.getUint32(0, true) !== MAGIC) throw damaged('has no PVEC header');
  const version = view.getUint32(4, true);
  if (version !== 1 && version !== 2) throw damaged(`has an unsupported version ${version}`);
  const count = view.getUint32(8, true);
  const dimensions = view.getUint32(12, true);
  const noDimensions = () => damaged('has rows of no dimensions');
  if (count > 0 && dimensions === 0 && version === 1) throw noDimensions();
  const vectorsEnd = HEADER + count * 16 + count * dimensions;
  const wrongSize = () => damaged('has the wrong size');
  // Rows of no dimensions hold together only with a lexical index after them.
  if (count > 0 && dimensions === 0 && bytes.byteLength < align4(vectorsEnd) + 8) throw noDimensions();
  if (version === 1 ? bytes.byteLength !== vectorsEnd : bytes.byteLength < align4(vectorsEnd) + 8) throw wrongSize();
  let at = HEADER;
  const take = <T>(make: (b: ArrayBuffer, o: number, n: number) => T, n: number, width: number) => {
    const arr = make(buf, at, n);
    at += n * width;
    return arr;
  };
  const packed: PackedVectors = {
    count,
    dimensions,
    chunk: take((b, o, n) => new Uint32Array(b, o, n), count, 4),
    page: take((b, o, n) => new Uint32Array(b, o, n), count, 4),
    scale: take((b, o, n) => new Float32Array(b, o, n), count, 4),
    norm: take((b, o, n) => new Float32Array(b, o, n), count, 4),
    data: take((b, o, n) => new Int8Array(b, o, n), count * dimensions, 1),
  };
  // Scores are scale / norm: a NaN or negative one would rank garbage first.
  for (let i = 0; i < count; i++) {
    const [scale, norm] = [packed.scale[i]!, packed.norm[i]!];
    if (!(scale > 0 && scale < Infinity && norm >= 0 && norm < Infinity))
      throw damaged(`has a bad scale or norm at row ${i}`);
  }
  if (version === 1) return packed;
  at = align4(at);
  const lexVersion = view.getUint32(at, true);
  const postings = view.getUint32(at + 4, true);
  at += 8;
  if (lexVersion === 0) {
    if (count > 0 && dimensions === 0) throw noDimensions();
    if (bytes.byteLength !== at) throw wrongSize();
    return packed;
  }
  if (bytes.byteLength !== at + (count * 2 + 1 + postings) * 4 + postings) throw wrongSize();
  const lexical: LexicalIndex = {
    version: lexVersion,
    docLen: take((b, o, n) => new Uint32Array(b, o, n), count, 4),
    termStart: take((b, o, n) => new Uint32Array(b, o, n), count + 1, 4),
    terms: take((b, o, n) => new Uint32Array(b, o, n), postings, 4),
    tf: take((b, o, n) => new Uint8Array(b, o, n), postings, 1),
  };
  // Row r's postings are [termStart[r], termStart[r + 1]): from 0, never backwards, ending at the
  // last posting. Anything else would send the index's loops past its arrays (billions of steps).
  const starts = lexical.termStart;
  if (starts[0] !== 0 || starts[count] !== postings) throw damaged('has a lexical index of the wrong length');
  for (let r = 0; r < count; r++)
    if (starts[r]! > starts[r + 1]!) throw damaged(`has a lexical index out of order at row ${r}`);
  packed.lexical = lexical;
  return packed;
}

/** Several packs (a file's parts) as one, ordered by chunk number. */
export function concatPacked(parts: PackedVectors[]): PackedVectors {
  const dimensions = parts[0]?.dimensions ?? 0;
  if (parts.some((p) => p.dimensions !== dimensions)) throw new Error('Parts have different dimensions');
  const order = parts.flatMap((p, pi) => Array.from(p.chunk, (c, i) => ({ c, pi, i }))).sort((a, b) => a.c - b.c);
  const count = order.length;
  const out = emptyPack(count, dimensions);
  order.forEach(({ pi, i }, j) => {
    const p = parts[pi]!;
    out.chunk[j] = p.chunk[i]!;
    out.page[j] = p.page[i]!;
    out.scale[j] = p.scale[i]!;
    out.norm[j] = p.norm[i]!;
    out.data.set(p.data.subarray(i * dimensions, (i + 1) * dimensions), j * dimensions);
  });
  // The lexical index only when every part has one of the same terms version.
  const lexicals = parts.map((p) => p.lexical);
  if (count > 0 && lexicals.every((l) => l && l.version === lexicals[0]!.version)) {
    out.lexical = concatLexical(
      lexicals as LexicalIndex[],
      order.map(({ pi, i }) => ({ part: pi, row: i })),
    );
  }
  return out;
}

interface Candidate {
  /** Index of the pack in the list given to topK. */
  pack: number;
  chunk: number;
  page: number;
  score: number;
}

/**
 * The k best rows over several packs by (approximate) cosine similarity to `query`: the dot
 * products of the int8 rows (int8-dots.ts), a small sorted list for the best k.
 */
export function topK(packs: PackedVectors[], query: Float32Array, k: number): Candidate[] {
  let qNorm = 0;
  for (const v of query) qNorm += v * v;
  qNorm = Math.sqrt(qNorm);
  const best: Candidate[] = [];
  if (qNorm === 0 || k <= 0) return best;
  let floor = -Infinity;
  packs.forEach((p, pi) => {
    if (p.dimensions !== query.length) return;
    const { data, dimensions: dims } = p;
    const dots = int8Dots(p, query); // WebAssembly SIMD; undefined where it does not run
    for (let i = 0; i < p.count; i++) {
      const norm = p.norm[i]!;
      if (norm === 0) continue;
      let dot = 0;
      if (dots) dot = dots[i]!;
      else for (let d = 0, base = i * dims; d < dims; d++) dot += query[d]! * data[base + d]!;
      const score = (dot * p.scale[i]!) / (norm * qNorm);
      if (best.length === k && score <= floor) continue;
      let at = best.length;
      while (at > 0 && best[at - 1]!.score < score) at--;
      best.splice(at, 0, { pack: pi, chunk: p.chunk[i]!, page: p.page[i]!, score });
      if (best.length > k) best.pop();
      floor = best.length === k ? best[k - 1]!.score : -Infinity;
    }
  });
  return best;
}

/** Exact cosine similarity of two float vectors. */
export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

/** float32 vector ↔ the bytes of a DynamoDB Binary attribute (little-endian, as every Lambda CPU). */
export const vectorToBinary = (v: Float32Array): Uint8Array =>
  new Uint8Array(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength));

export function binaryToVector(bytes: Uint8Array): Float32Array {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}
