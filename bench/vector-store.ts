import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startS3Vectors } from '../infra/local/s3-vectors.ts';
import { partVectorsKey } from '#shared/files/storage.ts';
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
import type { Benchmark, BenchContext } from './lib/context.ts';
import { info, median, p99, type Check } from './lib/report.ts';
import { memoryStorage } from '../test/helpers/memory-storage.ts';

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
//
// Sizes: the default (100 documents, 100,000 chunks) takes 2–3 minutes. VECTOR_BENCH_DOCS may
// name several sizes, measured in turn in one run, the smallest the others' baseline:
//   VECTOR_BENCH_DOCS=100,1000 npm run bench -- vector-store
// is the library of 1,000 documents (1 M chunks) beside 100: about 25 minutes on the 2-core
// machine and a peak RSS of ~9 GB (the stand-in holds 1 M float32 vectors, 5.9 GiB, in this
// process; results in bench/results/vector-store-1000-docs.md); each size's peak RSS is reported. Each document's rows are generated when written
// (deterministically, the same for both backends), and each phase frees its objects before the next.

process.env.AWS_ACCESS_KEY_ID ??= 'local';
process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
/** Library sizes measured in turn, smallest first (e.g. `100,1000`: the larger's figures get the smaller's as baseline). */
const SIZES = (process.env.VECTOR_BENCH_DOCS ?? '100')
  .split(',')
  .map(Number)
  .sort((a, b) => a - b);
const CHUNKS = Number(process.env.VECTOR_BENCH_CHUNKS ?? 1000);
const DIMENSIONS = Number(process.env.VECTOR_BENCH_DIMENSIONS ?? 1536);
const QUERIES = Number(process.env.VECTOR_BENCH_QUERIES ?? 20);
const WANTED = 24; // k 8 × oversampling 3, as retrieve.ts
const COLD_QUERIES = Math.min(QUERIES, 3);

/** Deterministic pseudo-random numbers (xorshift), so runs compare; a document's rows are made when written, never all held. */
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

const queryVector = (i: number) => {
  const next = random(1_000_003 + i);
  return Float32Array.from({ length: DIMENSIONS }, () => next());
};
const queryText = (i: number) => `${VOCABULARY[i * 37]} ${VOCABULARY[i * 101 + 5]} ${VOCABULARY[i * 13 + 7]}`;

const peakRssMiB = () => Math.round(process.resourceUsage().maxRSS / 1024);
/**
 * A full garbage collection, outside the timed parts, and a turn of the event loop for V8 to
 * free the array buffers it found dead (on another thread): a cold load must not find the
 * previous load's gigabytes still there, and a cold instance starts with none.
 */
const gc: () => void = (() => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc');
})();
async function collectGarbage(): Promise<void> {
  gc();
  await new Promise((resolve) => setImmediate(resolve));
}

/** The figures of one library size. */
interface Measured {
  docs: number;
  packCold: number[];
  packWarm: number[];
  s3Cold: number[];
  s3Warm: number[];
  userLoad: number[];
  userQuery: number[];
  packBytes: number;
  lexBytes: number;
  perUserBytes: number;
  candidatesPerQuery: number;
  packWriteMs: number;
  s3WriteMs: number;
  peakRssAfterPacks: number;
  peakRssAfterS3: number;
  peakRssAfterPerUser: number;
}

async function measure(ctx: BenchContext, DOCS: number): Promise<Measured> {
  await collectGarbage();
  const userId = 'bench-user';
  const files = Array.from({ length: DOCS }, (_, d) => ({ fileId: `file${d}`, runId: `run${d}` }));
  const ref = (d: number): RunRef => ({ userId, ...files[d]!, model: 'text-embedding-3-small' });
  const partKey = (d: number) => partVectorsKey(files[d]!.fileId, files[d]!.runId, 0);

  // ---- packs
  const packStorage = memoryStorage();
  const packs = new PackStore(packStorage);
  const packKeys: string[] = [];
  let t0 = performance.now();
  for (let d = 0; d < DOCS; d++) {
    await packs.writePart(ref(d), 0, rowsOf(d), DIMENSIONS);
    packKeys.push((await packs.gatherRun(ref(d), 1)).key);
    await packStorage.deleteKeys([partKey(d)]); // the part, gathered into the file's object
  }
  const packWriteMs = performance.now() - t0;
  ctx.log(`vector-store: packs written (${DOCS} × ${CHUNKS} × ${DIMENSIONS}) in ${(packWriteMs / 1000).toFixed(1)} s`);
  const packCold: number[] = [];
  const packWarm: number[] = [];
  const loaded: PackedVectors[] = [];
  /** Query q over the loaded packs: the dense top k and the lexical one. */
  const searchLoaded = (q: number) => {
    topK(loaded, queryVector(q), WANTED);
    bm25TopK(
      loaded.map((p) => p.lexical),
      queryTerms(queryText(q)),
      WANTED,
    );
  };
  for (let q = 0; q < COLD_QUERIES; q++) {
    // The previous load is garbage before the next: one library in memory at a time. Emptied in
    // place: the array itself stays reachable from this suspended function (measured: three cold
    // loads of the 1 M-chunk library held 10 GB).
    loaded.length = 0;
    await collectGarbage();
    t0 = performance.now();
    await Promise.all(
      packKeys.map(async (k, i) => {
        loaded[i] = decodePacked(await packStorage.get(k));
      }),
    );
    searchLoaded(q);
    packCold.push(performance.now() - t0);
  }
  for (let q = 0; q < QUERIES; q++) {
    t0 = performance.now();
    searchLoaded(q);
    packWarm.push(performance.now() - t0);
  }
  const packBytes = packStorage.bytes('.pvec');
  loaded.length = 0;
  await packStorage.deletePrefix('');
  await collectGarbage();
  const peakRssAfterPacks = peakRssMiB();
  ctx.log(`vector-store: packs measured; peak RSS so far ${peakRssAfterPacks} MiB`);

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
    await lexStorage.deleteKeys([partKey(d)]);
    if ((d + 1) % 100 === 0 && d + 1 < DOCS)
      ctx.log(`vector-store: S3 Vectors ${d + 1} documents written, ${((performance.now() - t0) / 1000).toFixed(0)} s`);
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
  for (let q = 0; q < COLD_QUERIES; q++) {
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
  lexicalCache.clear();
  client.destroy();
  await standIn.close();
  await collectGarbage();
  const peakRssAfterS3 = peakRssMiB();
  ctx.log(`vector-store: S3 Vectors measured; peak RSS so far ${peakRssAfterS3} MiB`);

  // The alternative for BM25 (docs/DECISIONS.md "BM25 with S3 Vectors"): one lexical index per
  // user, every file's rows in one object: its size, its load (decode, group by term) and a query.
  const lexicalPacks: PackedVectors[] = [];
  await Promise.all(
    [...lexKeys.values()].map(async (k, i) => {
      lexicalPacks[i] = decodePacked(await lexStorage.get(k));
    }),
  );
  const perUser = encodePacked(concatPacked(lexicalPacks));
  lexicalPacks.length = 0;
  await lexStorage.deletePrefix('');
  const userLoad: number[] = [];
  let userIndex: PackedVectors | undefined;
  for (let i = 0; i < COLD_QUERIES; i++) {
    userIndex = undefined;
    await collectGarbage();
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
  return {
    docs: DOCS,
    packCold,
    packWarm,
    s3Cold,
    s3Warm,
    userLoad,
    userQuery,
    packBytes,
    lexBytes,
    perUserBytes: perUser.byteLength,
    candidatesPerQuery: candidates / s3Cold.length,
    packWriteMs,
    s3WriteMs,
    peakRssAfterPacks,
    peakRssAfterS3,
    peakRssAfterPerUser: peakRssMiB(),
  };
}

const round1 = (x: number) => Math.round(x * 10) / 10;

/** One size's figures; with `baseline` (the smaller library measured in the same run), its values and the ratios. */
function checksOf(m: Measured, baseline?: Measured): Check[] {
  const figure = (metric: string, value: (x: Measured) => number, unit: string): Check => {
    const v = value(m);
    if (!baseline) return info(metric, v, unit);
    const b = value(baseline);
    return info(`${metric} @ ${m.docs} docs`, v, unit, { baseline: b, ratio: b ? v / b : undefined });
  };
  const ms = (name: string, samples: (x: Measured) => number[]): Check[] => [
    figure(`${name} p50`, (x) => round1(median(samples(x))), 'ms'),
    figure(`${name} p99`, (x) => round1(p99(samples(x))), 'ms'),
  ];
  const MiB = (bytes: number) => Math.round(bytes / 2 ** 20);
  return [
    figure('library size', (x) => x.docs * CHUNKS, 'chunks'),
    ...ms(`packs cold (load all + rank; ${COLD_QUERIES} queries)`, (x) => x.packCold),
    ...ms(`packs warm (rank in memory; ${QUERIES} queries)`, (x) => x.packWarm),
    ...ms(`s3vectors cold (query + candidate lexical loads; ${COLD_QUERIES} queries)`, (x) => x.s3Cold),
    ...ms(`s3vectors warm (${QUERIES} queries)`, (x) => x.s3Warm),
    figure('packs objects', (x) => MiB(x.packBytes), 'MiB'),
    figure('s3vectors lexical objects', (x) => MiB(x.lexBytes), 'MiB'),
    figure('candidate files per query (s3vectors)', (x) => round1(x.candidatesPerQuery), 'files'),
    ...ms('per-user lexical index: load (decode + group by term)', (x) => x.userLoad),
    ...ms('per-user lexical index: BM25 query', (x) => x.userQuery),
    figure('per-user lexical index object', (x) => MiB(x.perUserBytes), 'MiB'),
    figure('write time packs', (x) => Math.round(x.packWriteMs / 1000), 's'),
    figure('write time s3vectors (stand-in)', (x) => Math.round(x.s3WriteMs / 1000), 's'),
    figure('peak RSS after packs', (x) => x.peakRssAfterPacks, 'MiB'),
    figure('peak RSS after s3vectors', (x) => x.peakRssAfterS3, 'MiB'),
    figure('peak RSS after per-user index', (x) => x.peakRssAfterPerUser, 'MiB'),
  ];
}

export const vectorStore: Benchmark = {
  name: 'vector-store',
  title: 'Retrieval across a library with each vector store (packs, S3 Vectors stand-in), p50/p99 cold and warm',
  async run(ctx) {
    const measured: Measured[] = [];
    for (const docs of SIZES) measured.push(await measure(ctx, docs));
    const [smallest] = measured;
    return {
      checks: measured.flatMap((m, i) => checksOf(m, i > 0 ? smallest : undefined)),
      notes: [
        `${SIZES.join(' and ')} documents × ${CHUNKS} chunks × ${DIMENSIONS} dimensions; set VECTOR_BENCH_DOCS (one size, or several: 100,1000) / VECTOR_BENCH_CHUNKS / VECTOR_BENCH_DIMENSIONS for other sizes.`,
        'Peak RSS is the process’s (process.resourceUsage().maxRSS), cumulative over the run: the S3 Vectors stand-in runs in the bench’s process.',
        'S3 Vectors is the loopback stand-in (exact search in JavaScript over every vector): its latency is not the service’s.',
      ],
      data: { sizes: SIZES, chunks: CHUNKS, dimensions: DIMENSIONS, queries: QUERIES, measured },
    };
  },
};
