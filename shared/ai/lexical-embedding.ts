// A deterministic lexical embedding: hashed word unigrams and bigrams (the "hashing trick"),
// lower-cased, sub-linear term frequency, L2-normalised. It needs no model and no network, so
// PDF ingestion and retrieval work offline; texts that share words get a high cosine similarity.
// It measures word overlap, not meaning — the offline provider says so in its replies.

export const LEXICAL_EMBEDDING_DIMENSIONS = 512;
const BIGRAM_WEIGHT = 0.5;

/** Lower-cased words: runs of letters and digits (any script). */
export function words(text: string): string[] {
  return text.toLowerCase().normalize('NFKC').match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** FNV-1a, 32 bits. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function lexicalEmbedding(text: string, dimensions = LEXICAL_EMBEDDING_DIMENSIONS): Float32Array {
  const counts = new Map<string, number>();
  const tokens = words(text);
  const add = (feature: string, weight: number) => counts.set(feature, (counts.get(feature) ?? 0) + weight);
  for (let i = 0; i < tokens.length; i++) {
    add(tokens[i]!, 1);
    if (i > 0) add(`${tokens[i - 1]} ${tokens[i]}`, BIGRAM_WEIGHT);
  }
  const vector = new Float32Array(dimensions);
  for (const [feature, count] of counts) {
    const h = fnv1a(feature);
    // The sign from a high bit keeps colliding features from only ever adding up.
    const sign = h & 0x80000000 ? -1 : 1;
    vector[h % dimensions]! += sign * (1 + Math.log(count));
  }
  let norm = 0;
  for (const v of vector) norm += v * v;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < dimensions; i++) vector[i]! /= norm;
  return vector;
}
