import { LEXICAL_TERMS_VERSION, termCounts } from './terms.ts';

// A file's lexical index for BM25, stored in its packed vectors object (packed-vectors.ts, format
// version 2). It is a forward index: for each chunk (in pack order) its distinct term hashes and
// their counts, plus its length in terms. A query walks every posting once, testing each against
// the query's few terms through a 4096-bit filter: no inverted index to build when a pack is
// loaded, parts concatenate like the vectors, and 10,000 chunks of 800 tokens (about 3 million
// postings) score in a few milliseconds.

export interface LexicalIndex {
  /** LEXICAL_TERMS_VERSION of the terms (an index of another version is not used). */
  version: number;
  /** Terms per chunk (BM25 document length). */
  docLen: Uint32Array;
  /** Chunk i's postings are [termStart[i], termStart[i + 1]). */
  termStart: Uint32Array;
  /** Term hashes. */
  terms: Uint32Array;
  /** Occurrences of the term in the chunk, capped at 255. */
  tf: Uint8Array;
}

/** The index of chunk texts (in pack order). */
export function buildLexicalIndex(texts: string[]): LexicalIndex {
  const counted = texts.map(termCounts);
  const total = counted.reduce((n, c) => n + c.counts.size, 0);
  const index: LexicalIndex = {
    version: LEXICAL_TERMS_VERSION,
    docLen: new Uint32Array(texts.length),
    termStart: new Uint32Array(texts.length + 1),
    terms: new Uint32Array(total),
    tf: new Uint8Array(total),
  };
  let at = 0;
  counted.forEach(({ counts, length }, i) => {
    index.docLen[i] = length;
    index.termStart[i] = at;
    for (const [term, n] of counts) {
      index.terms[at] = term;
      index.tf[at] = Math.min(n, 255);
      at++;
    }
  });
  index.termStart[texts.length] = at;
  return index;
}

/** Several indexes as one, rows taken in `order` ({ part, row } per output row). */
export function concatLexical(parts: LexicalIndex[], order: { part: number; row: number }[]): LexicalIndex {
  const total = parts.reduce((n, p) => n + p.terms.length, 0);
  const out: LexicalIndex = {
    version: parts[0]?.version ?? LEXICAL_TERMS_VERSION,
    docLen: new Uint32Array(order.length),
    termStart: new Uint32Array(order.length + 1),
    terms: new Uint32Array(total),
    tf: new Uint8Array(total),
  };
  let at = 0;
  order.forEach(({ part, row }, j) => {
    const p = parts[part]!;
    const from = p.termStart[row]!;
    const to = p.termStart[row + 1]!;
    out.docLen[j] = p.docLen[row]!;
    out.termStart[j] = at;
    out.terms.set(p.terms.subarray(from, to), at);
    out.tf.set(p.tf.subarray(from, to), at);
    at += to - from;
  });
  out.termStart[order.length] = at;
  return out;
}

export const lexicalByteLength = (index: LexicalIndex) =>
  index.docLen.byteLength + index.termStart.byteLength + index.terms.byteLength + index.tf.byteLength;

// BM25's usual constants: term-frequency saturation and length normalisation.
const K1 = 1.2;
const B = 0.75;

export interface LexicalHit {
  /** Index of the index in the list given to bm25TopK. */
  pack: number;
  /** Row within that pack. */
  row: number;
  score: number;
}

/**
 * The n best rows over several indexes by BM25 for the query's term hashes. Document frequency
 * and average length are taken over all the indexes given (the chat's files), so a term rare in
 * the chat weighs more than one every file repeats. Indexes of another terms version are skipped.
 */
export function bm25TopK(indexes: (LexicalIndex | undefined)[], query: number[], n: number): LexicalHit[] {
  if (!query.length || n <= 0) return [];
  const usable = indexes.map((ix) => (ix && ix.version === LEXICAL_TERMS_VERSION ? ix : undefined));
  const filter = new Uint8Array(4096);
  for (const t of query) filter[t & 4095] = 1;
  const qIndex = new Map(query.map((t, i) => [t, i]));

  // One pass over every posting: the matches (few) and the statistics.
  let docs = 0;
  let totalLen = 0;
  const df = new Float64Array(query.length);
  const matches: { pack: number; row: number; q: number; tf: number }[] = [];
  usable.forEach((ix, pack) => {
    if (!ix) return;
    const rows = ix.docLen.length;
    docs += rows;
    for (let row = 0; row < rows; row++) {
      totalLen += ix.docLen[row]!;
      const end = ix.termStart[row + 1]!;
      for (let p = ix.termStart[row]!; p < end; p++) {
        const term = ix.terms[p]!;
        if (filter[term & 4095] === 0) continue;
        const q = qIndex.get(term);
        if (q === undefined) continue;
        df[q]!++;
        matches.push({ pack, row, q, tf: ix.tf[p]! });
      }
    }
  });
  if (!matches.length) return [];
  const avgLen = totalLen / docs || 1;
  const idf = Array.from(df, (d) => Math.log(1 + (docs - d + 0.5) / (d + 0.5)));
  const scores = new Map<number, LexicalHit>();
  for (const m of matches) {
    const len = usable[m.pack]!.docLen[m.row]!;
    const part = (idf[m.q]! * m.tf * (K1 + 1)) / (m.tf + K1 * (1 - B + (B * len) / avgLen));
    const key = m.pack * 0x100000000 + m.row;
    const hit = scores.get(key);
    if (hit) hit.score += part;
    else scores.set(key, { pack: m.pack, row: m.row, score: part });
  }
  return [...scores.values()].sort((a, b) => b.score - a.score || a.pack - b.pack || a.row - b.row).slice(0, n);
}
