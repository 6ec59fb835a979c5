import { LEXICAL_TERMS_VERSION, termCounts } from './terms.ts';

// A file's lexical index for BM25, stored in its packed vectors object (packed-vectors.ts, format
// version 2). It is stored as a forward index: for each chunk (in pack order) its distinct term
// hashes and their counts, plus its length in terms, so parts concatenate like the vectors. A
// loaded pack groups it by term once (postingsByTerm, tens of milliseconds for 10,000 chunks),
// and a query then reads only its own terms' postings.

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

/**
 * What a chunk is indexed by: its innermost heading, then its text. The heading's terms count in
 * the chunk's score, so a question naming a section ("the methods") finds the passages under it,
 * not only the one that holds the heading. Outer headings are left out: a document's title would
 * otherwise be indexed with every chunk.
 */
export const lexicalText = (chunk: { text: string; section?: string }) =>
  chunk.section ? `${chunk.section.split(' > ').at(-1)}\n${chunk.text}` : chunk.text;

/** The index of chunk texts (in pack order). */
export function buildLexicalIndex(texts: string[]): LexicalIndex {
  return indexOf(texts.map(termCounts));
}

/** Texts counted between two turns of the event loop (buildLexicalIndexAside). */
const TEXTS_PER_TURN = 8;

/**
 * buildLexicalIndex, giving the event loop a turn every few texts: what this process has under
 * way (a request being sent, its answer arriving) goes on while the terms are counted.
 */
export async function buildLexicalIndexAside(texts: string[]): Promise<LexicalIndex> {
  const counted: ReturnType<typeof termCounts>[] = [];
  for (let i = 0; i < texts.length; i += TEXTS_PER_TURN) {
    await new Promise((resolve) => setImmediate(resolve));
    for (const text of texts.slice(i, i + TEXTS_PER_TURN)) counted.push(termCounts(text));
  }
  return indexOf(counted);
}

/** An index of `rows` documents holding `total` term entries in all, every array zeroed. */
function allocated(version: LexicalIndex['version'], rows: number, total: number): LexicalIndex {
  return {
    version,
    docLen: new Uint32Array(rows),
    termStart: new Uint32Array(rows + 1),
    terms: new Uint32Array(total),
    tf: new Uint8Array(total),
  };
}

function indexOf(counted: ReturnType<typeof termCounts>[]): LexicalIndex {
  const total = counted.reduce((n, c) => n + c.counts.size, 0);
  const index = allocated(LEXICAL_TERMS_VERSION, counted.length, total);
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
  index.termStart[counted.length] = at;
  return index;
}

/** Several indexes as one, rows taken in `order` ({ part, row } per output row). */
export function concatLexical(parts: LexicalIndex[], order: { part: number; row: number }[]): LexicalIndex {
  const total = parts.reduce((n, p) => n + p.terms.length, 0);
  const out = allocated(parts[0]?.version ?? LEXICAL_TERMS_VERSION, order.length, total);
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

// BM25's usual constants: term-frequency saturation and length normalisation.
const K1 = 1.2;
const B = 0.75;

interface LexicalHit {
  /** Index of the index in the list given to bm25TopK. */
  pack: number;
  /** Row within that pack. */
  row: number;
  score: number;
}

/**
 * The same postings grouped by term (an inverted index), built from the stored forward index
 * once per loaded pack: a query then reads only the postings of its own terms (a few thousand)
 * instead of testing all of them (millions for 10,000 chunks).
 */
interface PostingsByTerm {
  /** Term hash → its group, an open-addressing table (terms are hashes already: slot = term & mask). */
  slots: { terms: Uint32Array; groups: Int32Array; mask: number; size: number };
  /** Group g's postings are [start[g], start[g + 1]), in ascending row order. */
  start: Uint32Array;
  row: Uint32Array;
  tf: Uint8Array;
  /** Sum of docLen (for the average length). */
  totalLen: number;
}

/** The group of a term, or -1. */
function groupOf(slots: PostingsByTerm['slots'], term: number): number {
  for (let at = term & slots.mask; ; at = (at + 1) & slots.mask) {
    const g = slots.groups[at]!;
    if (g === -1 || slots.terms[at] === term) return g;
  }
}

/** The table with `term` in it (a new group when absent); grown to stay at most half full. */
function addTerm(slots: PostingsByTerm['slots'], term: number): PostingsByTerm['slots'] {
  if ((slots.size + 1) * 2 > slots.groups.length) {
    const grown = {
      terms: new Uint32Array(slots.groups.length * 2),
      groups: new Int32Array(slots.groups.length * 2).fill(-1),
      mask: slots.groups.length * 2 - 1,
      size: slots.size,
    };
    slots.groups.forEach((g, at) => {
      if (g === -1) return;
      let to = slots.terms[at]! & grown.mask;
      while (grown.groups[to] !== -1) to = (to + 1) & grown.mask;
      grown.terms[to] = slots.terms[at]!;
      grown.groups[to] = g;
    });
    slots = grown;
  }
  let at = term & slots.mask;
  while (slots.groups[at] !== -1 && slots.terms[at] !== term) at = (at + 1) & slots.mask;
  if (slots.groups[at] === -1) {
    slots.terms[at] = term;
    slots.groups[at] = slots.size++;
  }
  return slots;
}

const byTermOf = new WeakMap<LexicalIndex, PostingsByTerm>();

/** The index grouped by term (memoized per index object). */
export function postingsByTerm(ix: LexicalIndex): PostingsByTerm {
  const known = byTermOf.get(ix);
  if (known) return known;
  const rows = ix.docLen.length;
  const postings = ix.terms.length;
  let slots: PostingsByTerm['slots'] = {
    terms: new Uint32Array(1024),
    groups: new Int32Array(1024).fill(-1),
    mask: 1023,
    size: 0,
  };
  const group = new Uint32Array(postings);
  let counts = new Uint32Array(1024);
  for (let p = 0; p < postings; p++) {
    const term = ix.terms[p]!;
    let g = groupOf(slots, term);
    if (g === -1) {
      slots = addTerm(slots, term);
      g = slots.size - 1;
      if (g === counts.length) {
        const grown = new Uint32Array(counts.length * 2);
        grown.set(counts);
        counts = grown;
      }
    }
    group[p] = g;
    counts[g]!++;
  }
  const start = new Uint32Array(slots.size + 1);
  for (let g = 0; g < slots.size; g++) start[g + 1] = start[g]! + counts[g]!;
  const next = start.slice(0, slots.size);
  const row = new Uint32Array(postings);
  const tf = new Uint8Array(postings);
  let totalLen = 0;
  for (let r = 0; r < rows; r++) {
    totalLen += ix.docLen[r]!;
    for (let p = ix.termStart[r]!, end = ix.termStart[r + 1]!; p < end; p++) {
      const at = next[group[p]!]!++;
      row[at] = r;
      tf[at] = ix.tf[p]!;
    }
  }
  const built = { slots, start, row, tf, totalLen };
  byTermOf.set(ix, built);
  return built;
}

/** Bytes the index takes in memory: as stored, and grouped by term once that is built. */
export function lexicalByteLength(ix: LexicalIndex): number {
  const stored = ix.docLen.byteLength + ix.termStart.byteLength + ix.terms.byteLength + ix.tf.byteLength;
  const b = byTermOf.get(ix);
  return (
    stored +
    (b
      ? b.start.byteLength + b.row.byteLength + b.tf.byteLength + b.slots.terms.byteLength + b.slots.groups.byteLength
      : 0)
  );
}

/**
 * The n best rows over several indexes by BM25 for the query's term hashes. Document frequency
 * and average length are taken over all the indexes given (the chat's files), so a term rare in
 * the chat weighs more than one every file repeats. Indexes of another terms version are skipped.
 * Ties go to the earlier pack, then the earlier row.
 */
export function bm25TopK(indexes: (LexicalIndex | undefined)[], terms: number[], n: number): LexicalHit[] {
  const query = [...new Set(terms)];
  if (!query.length || n <= 0) return [];
  const grouped = indexes.map((ix) =>
    ix && ix.version === LEXICAL_TERMS_VERSION ? { ix, byTerm: postingsByTerm(ix) } : undefined,
  );
  let docs = 0;
  let totalLen = 0;
  const df = new Float64Array(query.length);
  for (const g of grouped) {
    if (!g) continue;
    docs += g.ix.docLen.length;
    totalLen += g.byTerm.totalLen;
    query.forEach((term, q) => {
      const at = groupOf(g.byTerm.slots, term);
      if (at !== -1) df[q]! += g.byTerm.start[at + 1]! - g.byTerm.start[at]!;
    });
  }
  if (!docs || df.every((d) => d === 0)) return [];
  const avgLen = totalLen / docs || 1;
  const idf = Array.from(df, (d) => Math.log(1 + (docs - d + 0.5) / (d + 0.5)));

  // Each pack's row scores in a typed array, then the best n in a short sorted list, rows in
  // ascending order so that ties keep the earlier row.
  const best: LexicalHit[] = [];
  let floor = -Infinity;
  grouped.forEach((g, pack) => {
    if (!g) return;
    const { ix, byTerm } = g;
    const scores = new Float64Array(ix.docLen.length);
    let any = false;
    query.forEach((term, q) => {
      const at = groupOf(byTerm.slots, term);
      if (at === -1) return;
      any = true;
      for (let p = byTerm.start[at]!, end = byTerm.start[at + 1]!; p < end; p++) {
        const row = byTerm.row[p]!;
        const tf = byTerm.tf[p]!;
        const len = ix.docLen[row]!;
        scores[row] = scores[row]! + (idf[q]! * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * len) / avgLen));
      }
    });
    if (!any) return;
    for (let row = 0; row < scores.length; row++) {
      const score = scores[row]!;
      if (score === 0 || (best.length === n && score <= floor)) continue;
      let at = best.length;
      while (at > 0 && best[at - 1]!.score < score) at--;
      best.splice(at, 0, { pack, row, score });
      if (best.length > n) best.pop();
      floor = best.length === n ? best[n - 1]!.score : -Infinity;
    }
  });
  return best;
}

/**
 * How rare each of the query's terms is across the indexes given (BM25's inverse document
 * frequency over the searched files); a term no index holds gets the highest weight.
 */
export function termRarity(indexes: (LexicalIndex | undefined)[], terms: number[]): Map<number, number> {
  const query = [...new Set(terms)];
  let docs = 0;
  const df = new Float64Array(query.length);
  for (const ix of indexes) {
    if (!ix || ix.version !== LEXICAL_TERMS_VERSION) continue;
    const byTerm = postingsByTerm(ix);
    docs += ix.docLen.length;
    query.forEach((term, q) => {
      const at = groupOf(byTerm.slots, term);
      if (at !== -1) df[q]! += byTerm.start[at + 1]! - byTerm.start[at]!;
    });
  }
  return new Map(query.map((term, q) => [term, Math.log(1 + (docs - df[q]! + 0.5) / (df[q]! + 0.5))]));
}
