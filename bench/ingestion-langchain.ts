import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { knownSentence, makeTextPdf } from '../test/helpers/make-pdf.ts';
import type { BenchContext } from './lib/context.ts';
import { describeLatency, embeddingLatency, latencyModelFromEnv } from './lib/embedding-latency.ts';
import { startLangChain, type LangChainRun } from './lib/langchain.ts';
import { type BenchOutput, type Check, info, median, ratioCheck } from './lib/report.ts';
import type { BenchService } from './lib/service.ts';
import { ingestThroughApi, type Ingested } from './ingestion.ts';

// The service against what a developer writes instead: LangChain.js's documented pipeline
// (bench/lib/langchain-child.ts: PDFLoader over pdf-parse → RecursiveCharacterTextSplitter →
// OpenAIEmbeddings → MemoryVectorStore), on the same bytes in the same run, time to searchable:
// the service from POST /upload to `completed`, LangChain from the loader's start to the store
// filled (its warm process: the first document is reported apart). Both embed through the same
// loopback OpenAI-compatible server: answering at once, then with a realistic provider's latency
// (bench/lib/embedding-latency.ts). Each run has bytes of its own (a comment after %%EOF) and the
// service a new user, so nothing is reused; the two sides take turns in a shuffled order.
// Targets (service ÷ LangChain): 300 pages ≤ 1.5 × with instant embeddings, ≤ 1.2 × with latency;
// 2,000 pages ≤ 1.0 × with latency.

const SIZES = (process.env.LANGCHAIN_BENCH_PAGES ?? '300,2000').split(',').map(Number);
const runsFor = (pages: number) => Number(process.env.LANGCHAIN_BENCH_RUNS ?? (pages <= 500 ? 3 : 2));
const TARGETS: Record<string, number> = { '300 instant': 1.5, '300 latency': 1.2, '2000 latency': 1.0 };

/** The same document with bytes of its own: a PDF comment after the end (readers ignore it). */
const distinct = (bytes: Uint8Array, tag: string) => Buffer.concat([bytes, Buffer.from(`\n% ${tag}\n`)]);

const shuffled = <T>(xs: T[]) => [...xs].sort(() => Math.random() - 0.5);

interface Case {
  pages: number;
  mode: 'instant' | 'latency';
  service: Ingested[];
  langchain: LangChainRun[];
  serviceRequests: number[];
  langchainRequests: number[];
}

export async function againstLangChain(ctx: BenchContext, svc: BenchService): Promise<BenchOutput> {
  const model = latencyModelFromEnv();
  const lc = startLangChain();
  const cases: Case[] = [];
  let firstDocument: LangChainRun | undefined;
  const failures: string[] = [];
  let user = 0;
  const viaService = async (bytes: Uint8Array, label: string) => {
    const u = await svc.signIn(`bench-vs-langchain-${user++}@example.com`);
    const before = svc.ai.count('/v1/embeddings');
    const run = await ingestThroughApi(svc, u.token, bytes, `${label}.pdf`);
    return { run, requests: svc.ai.count('/v1/embeddings') - before };
  };
  const viaLangChain = async (bytes: Uint8Array, label: string, page: number) => {
    const path = join(ctx.tmpDir, `${label}.pdf`);
    await writeFile(path, bytes);
    const before = svc.ai.count('/v1/embeddings');
    const run = await lc.ingest(path, svc.ai.baseURL, knownSentence(page, 3));
    return { run, requests: svc.ai.count('/v1/embeddings') - before };
  };
  try {
    for (const pages of SIZES) {
      const base = await makeTextPdf(pages);
      // Warm-up, not timed: each side's first document of this size (imports, instances, pdf.js).
      ctx.log(`ingestion vs LangChain: ${pages} pages, warm-up`);
      const warmLc = await viaLangChain(distinct(base, `warm-lc-${pages}`), `warm-lc-${pages}`, 1);
      firstDocument ??= warmLc.run;
      await viaService(distinct(base, `warm-svc-${pages}`), `warm-svc-${pages}`);
      for (const mode of ['instant', 'latency'] as const) {
        svc.ai.embeddingLatency = mode === 'latency' ? embeddingLatency(model) : undefined;
        const c: Case = { pages, mode, service: [], langchain: [], serviceRequests: [], langchainRequests: [] };
        for (let i = 0; i < runsFor(pages); i++) {
          ctx.log(`ingestion vs LangChain: ${pages} pages, ${mode}, run ${i + 1} of ${runsFor(pages)}`);
          const sides = {
            service: async () => {
              const r = await viaService(distinct(base, `svc-${pages}-${mode}-${i}`), `svc-${pages}`);
              c.service.push(r.run);
              c.serviceRequests.push(r.requests);
            },
            langchain: async () => {
              const page = 1 + ((i * 37) % pages);
              const r = await viaLangChain(distinct(base, `lc-${pages}-${mode}-${i}`), `lc-${pages}`, page);
              if (r.run.hitPage !== page) throw new Error(`LangChain's store found page ${r.run.hitPage}, not ${page}`);
              c.langchain.push(r.run);
              c.langchainRequests.push(r.requests);
            },
          };
          // A run that fails is reported, not the end of the benchmark (the others still count).
          for (const side of shuffled(['service', 'langchain'] as const))
            await sides[side]().catch((err: unknown) => {
              failures.push(
                `${pages} pages, ${mode}, ${side}: ${String((err as Error)?.message ?? err).slice(0, 200)}`,
              );
              ctx.log(`ingestion vs LangChain: ${failures.at(-1)}`);
            });
        }
        cases.push(c);
      }
      svc.ai.embeddingLatency = undefined;
    }
  } finally {
    svc.ai.embeddingLatency = undefined;
    await lc.stop();
  }

  const label = (c: Case) =>
    `${c.pages} pages, ${c.mode === 'instant' ? 'instant embeddings' : 'realistic embedding latency'}`;
  const checks: Check[] = cases
    .filter((c) => c.service.length && c.langchain.length)
    .map((c) => {
      const service = median(c.service.map((r) => r.ms));
      const langchain = median(c.langchain.map((r) => r.ms));
      const target = TARGETS[`${c.pages} ${c.mode}`];
      const metric = `${label(c)}: time to searchable, service vs LangChain.js`;
      return target !== undefined
        ? ratioCheck(metric, service, langchain, 'ms', { max: target })
        : info(metric, service, 'ms', { baseline: langchain, ratio: service / langchain });
    });
  if (firstDocument)
    checks.push(info("LangChain.js's first document (cold process), for scale", firstDocument.ms, 'ms'));
  const phase = (c: Case, key: string) => median(c.service.map((r) => r.breakdown[key] ?? Number.NaN));
  const phaseKeys = Object.keys(cases[0]?.service[0]?.breakdown ?? {});
  return {
    checks,
    details: [
      {
        title: 'service vs LangChain.js, time to searchable (ms, medians); where each spends it',
        header: [
          'case',
          'service',
          'LangChain',
          'ratio',
          'LC load (pdf-parse)',
          'LC split',
          'LC embed + store',
          'chunks svc / LC',
          'requests svc / LC',
          ...phaseKeys.map((k) => `svc: ${k.split(' (')[0]}`),
        ],
        rows: cases
          .filter((c) => c.service.length && c.langchain.length)
          .map((c) => {
            const service = median(c.service.map((r) => r.ms));
            const langchain = median(c.langchain.map((r) => r.ms));
            return [
              label(c),
              service,
              langchain,
              (service / langchain).toFixed(2),
              median(c.langchain.map((r) => r.loadMs)),
              median(c.langchain.map((r) => r.splitMs)),
              median(c.langchain.map((r) => r.embedMs)),
              `${c.service[0]?.data.chunks ?? '?'} / ${c.langchain[0]?.chunks ?? '?'}`,
              `${Math.max(...c.serviceRequests)} / ${Math.max(...c.langchainRequests)}`,
              ...phaseKeys.map((k) => phase(c, k)),
            ];
          }),
      },
    ],
    notes: [
      ...failures.map((f) => `FAILED RUN (left out): ${f}`),
      `vs LangChain.js: ${SIZES.join(' and ')} pages, ${SIZES.map(runsFor).join(' and ')} runs per case after one warm-up document per side and size; the sides take turns (shuffled); medians. Realistic latency: ${describeLatency(model)} (bench/lib/embedding-latency.ts says why; EMBED_LATENCY_* change it).`,
    ],
    data: {
      latencyModel: model,
      failures,
      langchainFirstDocument: firstDocument,
      cases: cases.map((c) => ({
        pages: c.pages,
        mode: c.mode,
        serviceMs: c.service.map((r) => r.ms),
        serviceBreakdowns: c.service.map((r) => r.breakdown),
        langchain: c.langchain,
        serviceRequests: c.serviceRequests,
        langchainRequests: c.langchainRequests,
      })),
    },
  };
}
