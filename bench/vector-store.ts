import { performance } from 'node:perf_hooks';
import { startS3Vectors } from '../infra/local/s3-vectors.ts';
import type { FileStorage } from '#shared/files/storage.ts';
import { bm25TopK, postingsByTerm } from '#shared/retrieval/lexical-index.ts';
import {
  concatPacked,
  decodePacked,
  encodePacked,
  topK,
  type PackedVectors,
} from '#shared/retrieval/packed-vectors.ts';
import { createS3VectorsClient, s3VectorsApiOf } from '#shared/retrieval/s3-vectors-api.ts';
import { queryTerms } from '#shared/retrieval/terms.ts';
import { PackStore, S3VectorsStore, type RunRef } from '#shared/retrieval/vector-store.ts';
import type { Benchmark } from './lib/context.ts';
import { info, median, p99, type Check } from './lib/report.ts';

// Retrieval across a library, each backend of the vector store (shared/retrieval/vector-store.ts)
// written through its own writers (a document = one part, then its completion), not ingested:
// VECTOR_BENCH_DOCS documents of VECTOR_BENCH_CHUNKS chunks each, VECTOR_BENCH_DIMENSIONS
// dimensions (OpenAI's default, 1536). The S3 objects are kept in memory; S3 Vectors is the
// loopback stand-in (exact search in JavaScript, not the service's approximate index: its
// figures are this machine's, the service's latency is its own).
// - packs: cold = read and decode every document's pack and rank (what a cold instance does for a
//   chat over the whole library); warm = rank the packs in memory.
// - s3vectors: QueryVectors (top-k ≤ 100) + BM25 over the lexical indexes of the files the dense
//   ranking found; cold = a new client and no lexical index loaded, warm = loaded.

process.env.AWS_ACCESS_KEY_ID ??= 'local';
process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
const DOCS = Number(process.env.VECTOR_BENCH_DOCS ?? 100);
const CHUNKS = Number(process.env.VECTOR_BENCH_CHUNKS ?? 1000);
const DIMENSIONS = Number(process.env.VECTOR_BENCH_DIMENSIONS ?? 1536);
const QUERIES = Number(process.env.VECTOR_BENCH_QUERIES ?? 20);
const WANTED = 24; // k 8 × oversampling 3, as retrieve.ts

/** Deterministic pseudo-random numbers (xorshift), so runs compare. */
function random(seed: number) {
  let x = seed || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return ((x >>> 0) / 2 ** 32) * 2 - 1;
  };
}
const VOCABULARY = Array.from({ length: 20_000 }, (_, i) => `w${i.toString(36)}`);

function rowsOf(doc: number) {
  const next = random(doc + 1);
  return Array.from({ length: CHUNKS }, (_, chunk) => {
    const vector = new Float32Array(DIMENSIONS);
    for (let d = 0; d < DIMENSIONS; d++) vector[d] = next();
    const words = Array.from({ length: 120 }, () => VOCABULARY[Math.floor(((next() + 1) / 2) * VOCABULARY.length)]!);
    return { chunk, page: 1 + Math.floor(chunk / 4), vector, text: words.join(' ') };
  });
}

/** The objects the stores write, in memory (the bench measures the stores, not S3). */
function memoryStorage(): FileStorage & { bytes(suffix?: string): number } {
  const objects = new Map<string, Uint8Array>();
  return {
    get: async (key: string) => {
      const o = objects.get(key);
      if (!o) throw Object.assign(new Error(key), { name: 'NoSuchKey' });
      return o;
    },
    put: async (key: string, body: Uint8Array | string) => void objects.set(key, Buffer.from(body)),
    deleteKeys: async (keys: string[]) => keys.forEach((k) => objects.delete(k)),
    listKeys: async (prefix: string) => [...objects.keys()].filter((k) => k.startsWith(prefix)),
    deletePrefix: async (prefix: string) => {
      for (const k of [...objects.keys()]) if (k.startsWith(prefix)) objects.delete(k);
      return 0;
    },
    bytes: (suffix = '') => [...objects].reduce((n, [k, o]) => (k.endsWith(suffix) ? n + o.byteLength : n), 0),
  } as unknown as FileStorage & { bytes(suffix?: string): number };
}

const queryVector = (i: number) => {
  const next = random(1_000_003 + i);
  return Float32Array.from({ length: DIMENSIONS }, () => next());
};
const queryText = (i: number) => `${VOCABULARY[i * 37]} ${VOCABULARY[i * 101 + 5]} ${VOCABULARY[i * 13 + 7]}`;

export const vectorStore: Benchmark = {
  name: 'vector-store',
  title: 'Retrieval across a library with each vector store (packs, S3 Vectors stand-in), p50/p99 cold and warm',
  async run(ctx) {
    const userId = 'bench-user';
    const files = Array.from({ length: DOCS }, (_, d) => ({ fileId: `file${d}`, runId: `run${d}` }));
    const ref = (d: number): RunRef => ({ userId, ...files[d]!, model: 'text-embedding-3-small' });

    // ---- packs
    const packStorage = memoryStorage();
    const packs = new PackStore(packStorage);
    const packKeys: string[] = [];
    let t0 = performance.now();
    for (let d = 0; d < DOCS; d++) {
      await packs.writePart(ref(d), 0, rowsOf(d), DIMENSIONS);
      packKeys.push((await packs.gatherRun(ref(d), 1)).key);
    }
    const packWriteMs = performance.now() - t0;
    ctx.log(
      `vector-store: packs written (${DOCS} × ${CHUNKS} × ${DIMENSIONS}) in ${(packWriteMs / 1000).toFixed(1)} s`,
    );
    const packCold: number[] = [];
    const packWarm: number[] = [];
    let loaded: PackedVectors[] = [];
    for (let q = 0; q < Math.min(QUERIES, 3); q++) {
      t0 = performance.now();
      loaded = await Promise.all(packKeys.map(async (k) => decodePacked(await packStorage.get(k))));
      topK(loaded, queryVector(q), WANTED);
      bm25TopK(
        loaded.map((p) => p.lexical),
        queryTerms(queryText(q)),
        WANTED,
      );
      packCold.push(performance.now() - t0);
    }
    for (let q = 0; q < QUERIES; q++) {
      t0 = performance.now();
      topK(loaded, queryVector(q), WANTED);
      bm25TopK(
        loaded.map((p) => p.lexical),
        queryTerms(queryText(q)),
        WANTED,
      );
      packWarm.push(performance.now() - t0);
    }
    const packBytes = packStorage.bytes('.pvec');
    loaded = [];

    // ---- S3 Vectors (stand-in)
    const standIn = await startS3Vectors();
    const bucket = 'bench-vectors';
    const client = createS3VectorsClient({ AWS_REGION: 'us-east-1', S3_VECTORS_ENDPOINT: standIn.url });
    const { CreateVectorBucketCommand } = await import('@aws-sdk/client-s3vectors');
    await client.send(new CreateVectorBucketCommand({ vectorBucketName: bucket }));
    const lexStorage = memoryStorage();
    const indexed = new S3VectorsStore(lexStorage, s3VectorsApiOf(client), bucket);
    const lexKeys = new Map<string, string>();
    t0 = performance.now();
    for (let d = 0; d < DOCS; d++) {
      await indexed.writePart(ref(d), 0, rowsOf(d), DIMENSIONS);
      lexKeys.set(files[d]!.fileId, (await indexed.gatherRun(ref(d), 1)).key);
    }
    const s3WriteMs = performance.now() - t0;
    ctx.log(`vector-store: S3 Vectors written in ${(s3WriteMs / 1000).toFixed(1)} s`);
    const lexicalCache = new Map<string, PackedVectors>();
    const s3Query = async (q: number) => {
      const hits = await indexed.query({
        userId,
        model: 'text-embedding-3-small',
        vector: queryVector(q),
        topK: WANTED,
        files,
      });
      const candidateFiles = [...new Set(hits.map((h) => h.fileId))];
      const lexical = await Promise.all(
        candidateFiles.map(async (f) => {
          let p = lexicalCache.get(f);
          if (!p) {
            p = decodePacked(await lexStorage.get(lexKeys.get(f)!));
            lexicalCache.set(f, p);
          }
          return p.lexical;
        }),
      );
      bm25TopK(lexical, queryTerms(queryText(q)), WANTED);
      return candidateFiles.length;
    };
    const s3Cold: number[] = [];
    const s3Warm: number[] = [];
    let candidates = 0;
    for (let q = 0; q < Math.min(QUERIES, 3); q++) {
      lexicalCache.clear();
      t0 = performance.now();
      candidates += await s3Query(q);
      s3Cold.push(performance.now() - t0);
    }
    for (let q = 0; q < QUERIES; q++) {
      await s3Query(q); // its candidate files' lexical indexes loaded
      t0 = performance.now();
      await s3Query(q);
      s3Warm.push(performance.now() - t0);
    }
    const lexBytes = lexStorage.bytes('.plex');
    client.destroy();
    await standIn.close();

    // The alternative for BM25 (docs/DECISIONS.md "BM25 with S3 Vectors"): one lexical index per
    // user, every file's rows in one object: its size, its load (decode, group by term) and a query.
    const perUser = encodePacked(
      concatPacked(await Promise.all([...lexKeys.values()].map(async (k) => decodePacked(await lexStorage.get(k))))),
    );
    const userLoad: number[] = [];
    let userIndex: PackedVectors | undefined;
    for (let i = 0; i < 3; i++) {
      t0 = performance.now();
      userIndex = decodePacked(perUser);
      postingsByTerm(userIndex.lexical!);
      userLoad.push(performance.now() - t0);
    }
    const userQuery: number[] = [];
    for (let q = 0; q < QUERIES; q++) {
      t0 = performance.now();
      bm25TopK([userIndex!.lexical], queryTerms(queryText(q)), WANTED);
      userQuery.push(performance.now() - t0);
    }

    const ms = (name: string, samples: number[]): Check[] => [
      info(`${name} p50`, Math.round(median(samples) * 10) / 10, 'ms'),
      info(`${name} p99`, Math.round(p99(samples) * 10) / 10, 'ms'),
    ];
    return {
      checks: [
        info('library size', DOCS * CHUNKS, 'chunks'),
        ...ms('packs cold (load all + rank)', packCold),
        ...ms('packs warm (rank in memory)', packWarm),
        ...ms('s3vectors cold (query + candidate lexical loads)', s3Cold),
        ...ms('s3vectors warm', s3Warm),
        info('packs objects', Math.round(packBytes / 2 ** 20), 'MiB'),
        info('s3vectors lexical objects', Math.round(lexBytes / 2 ** 20), 'MiB'),
        info('candidate files per query (s3vectors)', Math.round((candidates / s3Cold.length) * 10) / 10, 'files'),
        ...ms('per-user lexical index: load (decode + group by term)', userLoad),
        ...ms('per-user lexical index: BM25 query', userQuery),
        info('per-user lexical index object', Math.round(perUser.byteLength / 2 ** 20), 'MiB'),
        info('write time packs', Math.round(packWriteMs / 1000), 's'),
        info('write time s3vectors (stand-in)', Math.round(s3WriteMs / 1000), 's'),
      ],
      notes: [
        `${DOCS} documents × ${CHUNKS} chunks × ${DIMENSIONS} dimensions; set VECTOR_BENCH_DOCS / VECTOR_BENCH_CHUNKS / VECTOR_BENCH_DIMENSIONS for other sizes.`,
        'S3 Vectors is the loopback stand-in (exact search in JavaScript): its latency is not the service’s.',
      ],
      data: { packCold, packWarm, s3Cold, s3Warm, userLoad, userQuery },
    };
  },
};
