import '../shared/config/pdf.ts';
import '../shared/config/retrieval.ts';
import { performance } from 'node:perf_hooks';
import { knownSentence } from '../test/helpers/make-pdf.ts';
import type { Benchmark } from './lib/context.ts';
import { missingFiles } from './lib/context.ts';
import { absoluteCheck, info, median, p99, type Check } from './lib/report.ts';
import { makeNumberedPdf } from './lib/pdfs.ts';
import { ingestThroughApi } from './ingestion.ts';

// Retrieval: the top 8 passages for a prompt over 10,000 stored chunks of one file chat, p50,
// timed on the retriever (what POST /message/logged-in calls in a file chat) in a warm
// function. The chunks are stored by the pipeline itself: generated PDFs with distinct text are
// uploaded and ingested through the API into one chat until it holds at least 10,000 chunks.
// Each prompt is a known sentence of a random page; how often its own passage is among the 8
// (cited with its page) is reported beside the time. Target: p50 ≤ 100 ms.

const TARGET_CHUNKS = 10_000;
const K = 8;
const QUERIES = 60;
const TARGET_MS = 100;
const FIRST_FILE_PAGES = 1_800;
const LINES_PER_PAGE = 40;
/** The rerank stage's candidates timed alone, and its target (offline reranker). */
const RERANK_BENCH_CANDIDATES = 50;
const RERANK_TARGET_MS = 20;

export const retrieval: Benchmark = {
  name: 'retrieval',
  title: 'top-8 over 10,000 stored chunks of one chat (the retriever, warm)',
  requires: () => missingFiles('functions/pdf-embed.ts', 'functions/ingest-pdf.ts', 'shared/retrieval/retrieve.ts'),
  async run(ctx) {
    const svc = await ctx.service();
    const { retrieverFor } = await import('#shared/retrieval/retrieve.ts');
    const { aiProvider } = await import('#shared/ai/provider.ts');
    const { config } = await import('#shared/config.ts');
    const { dynamo } = await import('#shared/clients.ts');
    const { s3Client } = await import('#shared/s3-client.ts');
    // The retriever send-message composes, on the service's configuration.
    const retrieveSources = retrieverFor(config(), dynamo(), s3Client());
    const maxPages = config().PDF_MAX_PAGES;

    const user = await svc.signIn('bench-retrieval@example.com');
    const chat = await svc.api('POST', '/chat', user.token, { name: 'retrieval bench', type: 'file' });
    if (chat.status !== 201) throw new Error(`POST /chat: ${chat.status} ${chat.body}`);
    const chatId: string = chat.json.data.id;

    // Files until the chat holds TARGET_CHUNKS chunks; the first one tells how many chunks a page makes.
    let chunks = 0;
    let pages = 0;
    const files: { fileId: string; pages: number; chunks: number; ms: number }[] = [];
    while (chunks < TARGET_CHUNKS) {
      const perPage = files.length ? chunks / pages : undefined;
      const want = perPage ? Math.ceil((TARGET_CHUNKS - chunks) / perPage) + 2 : FIRST_FILE_PAGES;
      const count = Math.min(maxPages, want);
      ctx.log(`retrieval: ingesting file ${files.length + 1} (${count} pages; ${chunks} chunks so far)`);
      const bytes = await makeNumberedPdf(count, pages + 1, LINES_PER_PAGE);
      const done = await ingestThroughApi(svc, user.token, bytes, `retrieval-${files.length + 1}.pdf`, chatId);
      files.push({ fileId: done.fileId, pages: count, chunks: done.data.chunks, ms: done.ms });
      chunks += done.data.chunks;
      pages += count;
    }

    const provider = await aiProvider();
    // A known sentence's page is counted across the files; a source's page is within its file.
    const where = (page: number) => {
      let start = 1;
      for (const f of files) {
        if (page < start + f.pages) return { fileId: f.fileId, page: page - start + 1 };
        start += f.pages;
      }
      throw new Error(`page ${page} is in no file`);
    };
    const cites = (sources: { fileId: string; page: number; text: string }[], q: { page: number; text: string }) => {
      const at = where(q.page);
      return sources.some((s) => s.fileId === at.fileId && s.page === at.page && s.text.includes(q.text));
    };
    const prompt = () => {
      const page = 1 + Math.floor(Math.random() * pages);
      return { page, text: knownSentence(page, Math.floor(Math.random() * LINES_PER_PAGE)) };
    };
    // The first call loads every file's packed vectors from S3 into the function's cache.
    const t0 = performance.now();
    const first = await retrieveSources({ chatId, prompt: prompt().text, provider, k: K });
    const coldMs = performance.now() - t0;
    if (first.length !== K) throw new Error(`retrieval returned ${first.length} passages, expected ${K}`);

    // The baseline: ranking alone, the same packed vectors already in memory (no I/O at all).
    const { FileRepository } = await import('#shared/files/file-repository.ts');
    const { FileStorage } = await import('#shared/files/storage.ts');
    const { decodePacked, topK } = await import('#shared/retrieval/packed-vectors.ts');
    const { bm25TopK } = await import('#shared/retrieval/lexical-index.ts');
    const { queryTerms } = await import('#shared/retrieval/terms.ts');
    const { tableName } = await import('#shared/clients.ts');
    const records = await new FileRepository(dynamo(), tableName()).getMany(files.map((f) => f.fileId));
    const storage = new FileStorage(s3Client(), svc.runtime.bucket);
    const packs = await Promise.all(
      records.map(async (r) => decodePacked(await storage.get(r.status === 'completed' ? r.vectorsKey : ''))),
    );
    const stored = packs.reduce((n, p) => n + p.count, 0);
    if (stored !== chunks) throw new Error(`the packed vectors hold ${stored} chunks, the records ${chunks}`);
    // The dense-only retrieval (the ranking before the lexical index), same chat, same process.
    const { createRetriever } = await import('#shared/retrieval/retrieve.ts');
    const { PackStore } = await import('#shared/retrieval/vector-store.ts');
    const { AttachmentRepository } = await import('#shared/files/attachment-repository.ts');
    const { ChunkRepository } = await import('#shared/files/chunk-repository.ts');
    // Each retriever its own repositories and caches, as each function instance has.
    const retrieverDeps = () => ({
      attachments: new AttachmentRepository(dynamo(), tableName()),
      files: new FileRepository(dynamo(), tableName()),
      chunks: new ChunkRepository(dynamo(), tableName()),
      storage,
      vectors: new PackStore(storage),
      cacheBytes: config().RETRIEVAL_CACHE_MB * 1024 * 1024,
    });
    const denseOnly = createRetriever({ ...retrieverDeps(), mode: 'dense' });
    await denseOnly({ chatId, prompt: prompt().text, provider, k: K }); // fills its cache
    const denseTimes: number[] = [];
    let denseHits = 0;
    // The same hybrid retrieval without the rerank stage (RERANK_PROVIDER=none), and the stage
    // alone: the offline reranker over the fused ranking's best RERANK_BENCH_CANDIDATES.
    const { createOfflineReranker } = await import('#shared/retrieval/rerank/offline-reranker.ts');
    const { rerankStage } = await import('#shared/retrieval/rerank/reranker.ts');
    const { termRarity } = await import('#shared/retrieval/lexical-index.ts');
    const unranked = createRetriever(retrieverDeps());
    await unranked({ chatId, prompt: prompt().text, provider, k: K }); // fills its cache
    const offlineReranker = createOfflineReranker();
    const unrankedTimes: number[] = [];
    const rerankTimes: number[] = [];
    let unrankedHits = 0;

    ctx.log(`retrieval: ${QUERIES} prompts over ${chunks} chunks in ${files.length} files`);
    const times: number[] = [];
    const embedTimes: number[] = [];
    const rankTimes: number[] = [];
    const lexicalTimes: number[] = [];
    let hits = 0;
    for (let i = 0; i < QUERIES; i++) {
      const q = prompt();
      const t = performance.now();
      const sources = await retrieveSources({ chatId, prompt: q.text, provider, k: K });
      times.push(performance.now() - t);
      if (sources.length !== K) throw new Error(`retrieval returned ${sources.length} passages`);
      if (cites(sources, q)) hits++;
      const ut = performance.now();
      const plain = await unranked({ chatId, prompt: q.text, provider, k: K });
      unrankedTimes.push(performance.now() - ut);
      if (cites(plain, q)) unrankedHits++;
      const pool = await unranked({ chatId, prompt: q.text, provider, k: RERANK_BENCH_CANDIDATES });
      const rt = performance.now();
      await rerankStage(
        offlineReranker,
        {
          query: q.text,
          passages: pool.map((s) => ({ text: s.text, section: s.section })),
          topN: K,
          termWeights: () =>
            termRarity(
              packs.map((p) => p.lexical),
              queryTerms(q.text),
            ),
        },
        10_000,
      );
      rerankTimes.push(performance.now() - rt);
      const dt = performance.now();
      const dense = await denseOnly({ chatId, prompt: q.text, provider, k: K });
      denseTimes.push(performance.now() - dt);
      if (cites(dense, q)) denseHits++;
      // For scale: the prompt's embedding alone (one request to the loopback model server)...
      const e = performance.now();
      const query = (await provider.embed([q.text])).vectors[0]!;
      embedTimes.push(performance.now() - e);
      // ...and the ranking alone (what the retriever oversamples: 3 × k candidates).
      const r = performance.now();
      topK(packs, query, K * 3);
      rankTimes.push(performance.now() - r);
      // ...and the BM25 ranking alone (the other half of the hybrid ranking).
      const l = performance.now();
      bm25TopK(
        packs.map((p) => p.lexical),
        queryTerms(q.text),
        K * 3,
      );
      lexicalTimes.push(performance.now() - l);
    }

    const checks: Check[] = [
      absoluteCheck(
        `top-${K} over ${chunks.toLocaleString('en-US')} chunks, p50`,
        median(times),
        'ms',
        { max: TARGET_MS },
        { baseline: median(rankTimes), ratio: median(times) / median(rankTimes) },
      ),
      absoluteCheck(
        `rerank stage alone, offline, top-${RERANK_BENCH_CANDIDATES} candidates → ${K}, p50`,
        median(rerankTimes),
        'ms',
        { max: RERANK_TARGET_MS },
      ),
      info(`rerank stage alone, offline, top-${RERANK_BENCH_CANDIDATES}, p99`, p99(rerankTimes), 'ms'),
      info('hybrid retrieval without the rerank stage (RERANK_PROVIDER=none), p50', median(unrankedTimes), 'ms', {
        ratio: median(times) / median(unrankedTimes),
      }),
      info(`top-${K}, p99`, p99(times), 'ms'),
      info('first call (loads the packed vectors from S3)', coldMs, 'ms'),
      info("of which the prompt's embedding (loopback model server), p50", median(embedTimes), 'ms'),
      info('of which the BM25 ranking (lexical index in the packed vectors), p50', median(lexicalTimes), 'ms'),
      info('dense-only retrieval (RETRIEVAL_MODE=dense, the dense ranking alone), p50', median(denseTimes), 'ms', {
        ratio: median(times) / median(denseTimes),
      }),
      info(
        "prompt's own passage among the 8, cited with its page (lexical test embeddings)",
        (hits / QUERIES) * 100,
        '%',
      ),
      info('...the same with dense-only retrieval', (denseHits / QUERIES) * 100, '%'),
      info('...the same without the rerank stage', (unrankedHits / QUERIES) * 100, '%'),
    ];
    return {
      checks,
      details: [
        {
          title: 'the chat (ingested through the API; pipeline per file)',
          header: ['file', 'pages', 'chunks', 'ingestion ms', 'pages/s'],
          rows: files.map((f, i) => [`file ${i + 1}`, f.pages, f.chunks, f.ms, f.pages / (f.ms / 1000)]),
        },
      ],
      notes: [
        `${QUERIES} prompts, each a known sentence of a random page, after one call that fills the cache; k = ${K}. Baseline: the ranking alone (topK over the same packed vectors, already in memory).`,
        `Chunks stored by the pipeline (${LINES_PER_PAGE} known sentences a page, generated with pdf-lib); the chat has ${files.length} files.`,
      ],
      data: {
        times,
        unrankedTimes,
        rerankTimes,
        denseTimes,
        embedTimes,
        rankTimes,
        lexicalTimes,
        coldMs,
        files,
        chunks,
        pages,
        hits,
        denseHits,
      },
    };
  },
};
