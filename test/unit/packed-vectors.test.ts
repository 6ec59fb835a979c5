import {
  concatPacked,
  cosine,
  DamagedPackError,
  decodePacked,
  encodePacked,
  packVectors,
  topK,
  binaryToVector,
  vectorToBinary,
} from '#shared/retrieval/packed-vectors.ts';
import { bm25TopK, buildLexicalIndex, buildLexicalIndexAside } from '#shared/retrieval/lexical-index.ts';
import { int8Dots, simdAvailable } from '#shared/retrieval/int8-dots.ts';
import { queryTerms } from '#shared/retrieval/terms.ts';
import { pickQuote, pageAt } from '#shared/retrieval/quote.ts';
import { lexicalEmbedding } from '#shared/ai/lexical-embedding.ts';

// The packed vectors format and ranking, and the verbatim quote of a cited chunk.

function randomVector(dims: number, seed: number): Float32Array {
  let x = seed * 2654435761;
  const v = new Float32Array(dims);
  for (let i = 0; i < dims; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    v[i] = x / 0x7fffffff - 0.5;
  }
  return v;
}

test('encode → decode gives the same pack, and parts concatenate in chunk order', () => {
  const rows = Array.from({ length: 10 }, (_, i) => ({ chunk: i, page: i + 1, vector: randomVector(64, i + 1) }));
  const a = packVectors(rows.slice(5), 64);
  const b = packVectors(rows.slice(0, 5), 64);
  const joined = concatPacked([a, b]);
  expect(Array.from(joined.chunk)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  const decoded = decodePacked(encodePacked(joined));
  expect(decoded).toEqual(joined);
  expect(() => decodePacked(Buffer.from('not a pack at all'))).toThrow(DamagedPackError);
});

test('the SIMD kernel gives the dot products of the int8 rows, for any width and pack after pack', () => {
  expect(simdAvailable()).toBe(true); // so the cases below run the kernel, not the JavaScript fallback
  // The dots in plain JavaScript, as topK computes them where WebAssembly SIMD is missing.
  const reference = (pack: ReturnType<typeof packVectors>, query: Float32Array) =>
    Array.from({ length: pack.count }, (_, i) =>
      query.reduce((sum, q, d) => sum + q * pack.data[i * pack.dimensions + d]!, 0),
    );
  const packs = [1536, 100, 17, 1].map((dims) =>
    packVectors(
      Array.from({ length: 40 }, (_, i) => ({ chunk: i, page: 1, vector: randomVector(dims, dims + i) })),
      dims,
    ),
  );
  // A pack, others (smaller and larger: the module's memory is reused and grown), the first again.
  for (const pack of [...packs, packs[0]!, packs[2]!]) {
    const query = randomVector(pack.dimensions, 99);
    const dots = int8Dots(pack, query)!;
    const want = reference(pack, query);
    const largest = Math.max(...want.map(Math.abs));
    expect(dots).toHaveLength(pack.count);
    // The query is rounded to int16 (relative error ≤ 1e-4 of its largest value per element).
    dots.forEach((dot, i) => expect(Math.abs(dot - want[i]!)).toBeLessThanOrEqual(largest * 1e-3));
    expect(Array.from(dots).indexOf(Math.max(...dots))).toBe(want.indexOf(Math.max(...want)));
  }
  expect(Array.from(int8Dots(packs[0]!, new Float32Array(1536))!)).toEqual(new Array(40).fill(0)); // a zero query
});

test('int8 ranking finds the same best rows as exact cosine similarity', () => {
  const dims = 256;
  const rows = Array.from({ length: 500 }, (_, i) => ({ chunk: i, page: 1, vector: randomVector(dims, i + 7) }));
  const pack = packVectors(rows, dims);
  for (const q of [3, 77, 401]) {
    const query = rows[q]!.vector.map((v, d) => v + (d % 7 === 0 ? 0.05 : 0));
    const exact = rows
      .map((r) => ({ chunk: r.chunk, score: cosine(query, r.vector) }))
      .sort((x, y) => y.score - x.score)
      .slice(0, 5);
    const ranked = topK([pack], query, 5);
    expect(ranked[0]!.chunk).toBe(q);
    expect(ranked.map((r) => r.chunk).slice(0, 3)).toEqual(exact.map((e) => e.chunk).slice(0, 3));
    for (const r of ranked) expect(Math.abs(r.score - cosine(query, rows[r.chunk]!.vector))).toBeLessThan(0.01);
  }
});

test('topK keeps the best k across several packs, best first', () => {
  const texts = ['the cat sat on the mat', 'dogs chase cats', 'quantum chromodynamics of quarks', 'a mat for the cat'];
  const packs = [0, 1].map((p) =>
    packVectors(
      texts.slice(p * 2, p * 2 + 2).map((t, i) => ({ chunk: i, page: 1, vector: lexicalEmbedding(t) })),
      512,
    ),
  );
  const best = topK(packs, lexicalEmbedding('cat on a mat'), 2);
  expect(best.map((b) => [b.pack, b.chunk])).toEqual([
    [1, 1],
    [0, 0],
  ]);
  expect(best[0]!.score).toBeGreaterThanOrEqual(best[1]!.score);
});

test('a float32 vector survives the Binary attribute round trip', () => {
  const v = randomVector(1536, 3);
  expect(binaryToVector(vectorToBinary(v))).toEqual(v);
});

test('the quote is the sentence sharing the most words with the prompt, verbatim', () => {
  const text =
    'Tracing starts at loop headers. The monitor restores the interpreter state when a trace call returns. Nothing else happens.';
  const { quote, offset } = pickQuote(text, 'What does the monitor restore when a trace returns?');
  expect(quote).toBe('The monitor restores the interpreter state when a trace call returns.');
  expect(text.slice(offset, offset + quote.length)).toBe(quote);
});

test('a long sentence is cut to 300 characters around the words it shares with the prompt', () => {
  const filler = Array.from({ length: 120 }, (_, i) => `filler${i}`).join(' ');
  const text = `${filler} the zebra crossing appears here ${filler}.`;
  const { quote, offset } = pickQuote(text, 'zebra crossing');
  expect(quote.length).toBeLessThanOrEqual(300);
  expect(quote).toContain('zebra crossing');
  expect(text.slice(offset, offset + quote.length)).toBe(quote);
});

test('the page of a quote comes from where pages start in the chunk', () => {
  const starts: [number, number][] = [
    [0, 4],
    [120, 5],
    [300, 6],
  ];
  expect(pageAt(starts, 0, 4)).toBe(4);
  expect(pageAt(starts, 119, 4)).toBe(4);
  expect(pageAt(starts, 120, 4)).toBe(5);
  expect(pageAt(starts, 999, 4)).toBe(6);
});

describe('the lexical (BM25) index in the packed vectors', () => {
  const texts = [
    'The harbour renovation budget rose by twelve percent this year.',
    'Trace trees cover nested loops; the recorder stops at the loop header.',
    'Andreas Gal wrote the tracing compiler with colleagues at Mozilla.',
    'Budgets, budgets and more budgets: the committee discussed the harbour.',
  ];
  const rows = texts.map((text, i) => ({ chunk: i, page: i + 1, vector: lexicalEmbedding(text, 64), text }));

  test('is built from the chunk texts, survives encode → decode and concatenation of parts', () => {
    const whole = packVectors(rows, 64);
    expect(whole.lexical?.docLen.length).toBe(4);
    const joined = concatPacked([packVectors(rows.slice(2), 64), packVectors(rows.slice(0, 2), 64)]);
    expect(decodePacked(encodePacked(joined))).toEqual(whole);
    // A part without texts (an old part) leaves the whole file without an index, searched dense only.
    const mixed = concatPacked([
      packVectors(rows.slice(2), 64),
      packVectors(
        rows.slice(0, 2).map(({ text: _t, ...r }) => r),
        64,
      ),
    ]);
    expect(mixed.lexical).toBeUndefined();
    expect(decodePacked(encodePacked(mixed)).lexical).toBeUndefined();
  });

  test('a version 1 object (stored before the index) still decodes, without one', () => {
    const v2 = encodePacked(
      packVectors(
        rows.map(({ text: _t, ...r }) => r),
        64,
      ),
    );
    // Version 1 is version 2 without the (empty) lexical section.
    const v1 = Buffer.from(v2.subarray(0, 16 + 4 * 16 + 4 * 64));
    v1.writeUInt32LE(1, 4);
    const decoded = decodePacked(v1);
    expect(decoded.count).toBe(4);
    expect(decoded.lexical).toBeUndefined();
    expect(() => decodePacked(v1.subarray(0, v1.length - 1))).toThrow(/wrong size/);
  });

  test('a lexical index or rows that do not hold together are DamagedPackError, found by decoding', () => {
    const pack = packVectors(rows, 64);
    const damaged = (change: (p: ReturnType<typeof packVectors>) => void) => {
      const copy = decodePacked(encodePacked(pack));
      change(copy);
      return () => decodePacked(encodePacked(copy));
    };
    expect(damaged((p) => p.lexical!.termStart.fill(0xfffffff0, 1))).toThrow(DamagedPackError);
    expect(damaged((p) => p.lexical!.termStart.reverse())).toThrow(DamagedPackError);
    expect(damaged((p) => (p.lexical!.termStart[0] = 1))).toThrow(/lexical index/);
    expect(damaged((p) => (p.scale[1] = Number.NaN))).toThrow(/scale or norm at row 1/);
    expect(damaged((p) => (p.norm[2] = -1))).toThrow(/scale or norm at row 2/);
    expect(damaged(() => undefined)).not.toThrow();
    const zeroDims = Buffer.from(encodePacked(pack).subarray(0, 16 + 4 * 16));
    zeroDims.writeUInt32LE(0, 12);
    expect(() => decodePacked(zeroDims)).toThrow(/no dimensions/);
  });

  test('BM25 ranks by rare shared terms, folds plurals, and ignores stop words', () => {
    const { lexical } = packVectors(rows, 64);
    const rank = (q: string) => bm25TopK([lexical], queryTerms(q), 4).map((h) => h.row);
    expect(rank('Who wrote it?')[0]).toBe(2);
    expect(rank('the budget of the harbour').sort()).toEqual([0, 3]);
    expect(rank('loop')[0]).toBe(1);
    expect(rank('the of and')).toEqual([]);
    // Term frequency saturates: the row repeating "budgets" three times does not win by a multiple.
    const scores = bm25TopK([lexical], queryTerms('budget'), 4);
    expect(scores[0]!.row).toBe(3);
    expect(scores[0]!.score / scores[1]!.score).toBeLessThan(2);
  });

  test('grouped by term for queries, it scores as BM25 over the stored postings does, across files', () => {
    // Two files of 300 chunks over 3,000 words: thousands of distinct terms (the term table grows).
    const file = (seed: number) =>
      Array.from({ length: 300 }, (_, c) =>
        Array.from({ length: 40 }, (_, w) => `w${(c * 7919 + w * 104729 + seed) % 3000}z`).join(' '),
      );
    const indexes = [file(1), file(2)].map(
      (chunkTexts) =>
        packVectors(
          chunkTexts.map((text, i) => ({ chunk: i, page: 1, vector: lexicalEmbedding(text, 8), text })),
          8,
        ).lexical!,
    );
    // BM25 the long way, from the stored (forward) postings.
    const bruteForce = (query: number[]) => {
      const all = indexes.flatMap((ix, pack) => Array.from(ix.docLen, (len, row) => ({ pack, row, len, ix })));
      const avgLen = all.reduce((n, d) => n + d.len, 0) / all.length;
      const tfOf = (d: (typeof all)[number], term: number) => {
        for (let p = d.ix.termStart[d.row]!; p < d.ix.termStart[d.row + 1]!; p++)
          if (d.ix.terms[p] === term) return d.ix.tf[p]!;
        return 0;
      };
      const idf = query.map((t) => {
        const df = all.filter((d) => tfOf(d, t) > 0).length;
        return Math.log(1 + (all.length - df + 0.5) / (df + 0.5));
      });
      return all
        .map((d) => ({
          pack: d.pack,
          row: d.row,
          score: query.reduce((s, t, q) => {
            const tf = tfOf(d, t);
            return s + (idf[q]! * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * d.len) / avgLen));
          }, 0),
        }))
        .filter((h) => h.score > 0)
        .sort((a, b) => b.score - a.score || a.pack - b.pack || a.row - b.row)
        .slice(0, 10);
    };
    for (const [q, matches] of [
      ['w17z w2500z w999z', true],
      ['w3z', true],
      ['w1z w2z w3z w4z w5z w6z', true],
      ['nothing matches this', false],
    ] as const) {
      const query = queryTerms(q);
      const got = bm25TopK(indexes, query, 10);
      const want = bruteForce(query);
      expect(want.length > 0).toBe(matches);
      expect(got.map(({ pack, row }) => ({ pack, row }))).toEqual(want.map(({ pack, row }) => ({ pack, row })));
      got.forEach((h, i) => expect(h.score).toBeCloseTo(want[i]!.score, 9));
    }
  });
});

test('a long prompt ranks by at most 64 distinct terms', () => {
  const prompt = Array.from({ length: 500 }, (_, i) => `word${i}x`).join(' ');
  expect(queryTerms(prompt)).toHaveLength(64);
});

test('the lexical index built aside is the one built at once, and pending I/O callbacks run while it is built', async () => {
  const texts = Array.from(
    { length: 40 },
    (_, i) => `Trace trees cover loop ${i} of the program; the recorder compiles loop ${i % 7} to native code.`,
  );
  const events: string[] = [];
  setImmediate(() => events.push('a callback queued before'));
  const aside = buildLexicalIndexAside(texts).then((index) => {
    events.push('index built');
    return index;
  });
  const atOnce = buildLexicalIndex(texts);
  expect(await aside).toEqual(atOnce);
  expect(events).toEqual(['a callback queued before', 'index built']);
  // Given to packVectors, it is the pack's index, as when packVectors builds it from the texts.
  const rows = texts.map((text, i) => ({ chunk: i, page: 1, vector: randomVector(16, i + 1), text }));
  expect(decodePacked(encodePacked(packVectors(rows, 16, atOnce)))).toEqual(
    decodePacked(encodePacked(packVectors(rows, 16))),
  );
});
