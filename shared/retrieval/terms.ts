import { fnv1a, words } from '../ai/lexical-embedding.ts';

// The terms of the lexical (BM25) index and of its queries: lower-cased words (any script),
// stop words dropped, English plurals and -ing/-ed folded by a light suffix rule, each hashed to
// 32 bits. The same function runs at embed time and at query time; LEXICAL_TERMS_VERSION names
// it in every stored index, so an index made by another version is not mixed with these queries.

export const LEXICAL_TERMS_VERSION = 1;

/** Words too common to say which passage answers a question. */
export const STOP_WORDS = new Set(
  'a about after all also an and any are as at be been before being both but by can could did do does doing during each for from had has have having he her here him his how i if in into is it its just me more most my no not now of on once only or other our out over own same she should so some such than that the their them then there these they this those through to too under until up very was we were what when where which while who whom why will with would you your'.split(
    ' ',
  ),
);

/** A light, conservative stem: plurals and -ing / -ed endings of longer words. */
function stem(word: string): string {
  if (word.length <= 3 || /\d/.test(word)) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('ing') && word.length > 5) return word.slice(0, -3);
  if (word.endsWith('ed') && word.length > 4 && !word.endsWith('eed')) return word.slice(0, -2);
  if (word.endsWith('es') && /(?:ch|sh|x|ss|zz)es$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !/(?:ss|us|is|ys)$/.test(word)) return word.slice(0, -1);
  return word;
}

/** The indexed terms of a text, in order (stop words dropped, stemmed). */
export function indexTerms(text: string): string[] {
  const out: string[] = [];
  for (const w of words(text)) if (!STOP_WORDS.has(w)) out.push(stem(w));
  return out;
}

/** A text's term frequencies by term hash, and its length in terms (for BM25). */
export function termCounts(text: string): { counts: Map<number, number>; length: number } {
  const counts = new Map<number, number>();
  const terms = indexTerms(text);
  for (const t of terms) {
    const h = fnv1a(t);
    counts.set(h, (counts.get(h) ?? 0) + 1);
  }
  return { counts, length: terms.length };
}

/** Distinct terms a query ranks by: a long prompt costs no more than this (first ones kept). */
export const MAX_QUERY_TERMS = 64;

/** A query's distinct term hashes (at most MAX_QUERY_TERMS). */
export function queryTerms(text: string): number[] {
  return [...new Set(indexTerms(text).map(fnv1a))].slice(0, MAX_QUERY_TERMS);
}

/** A term's hash, as the index stores it. */
export const termHash = fnv1a;
