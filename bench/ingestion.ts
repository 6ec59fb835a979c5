import { performance } from 'node:perf_hooks';
import { makeTextPdf } from '../test/helpers/make-pdf.ts';
import { loadPdfjs, standardFontsDir } from '#shared/pdf/extract.ts';
import { Chunker } from '#shared/ingestion/chunker.ts';
import { normalizeText } from '#shared/sentences.ts';
import { countTextTokens } from '#shared/ingestion/chunk-tokens.ts';
import { lexicalEmbedding } from '#shared/ai/lexical-embedding.ts';
import type { Benchmark } from './lib/context.ts';
import { missingFiles } from './lib/context.ts';
import { absoluteCheck, info, median, ratioCheck } from './lib/report.ts';
import { type BenchService, uploadPdf } from './lib/service.ts';
import { againstLangChain } from './ingestion-langchain.ts';

// Ingestion: pages per second end to end for the generated 300-page PDF, from POST /upload to
// the file's status `completed` (upload, POST /message/pdf, fetch, extract, chunk, embed with an
// instant embedding server, store), against plain pdfjs-dist text extraction of the same bytes
// in the same process and run. Target: ≥ 0.7 × plain extraction.
// Embedding calls: the embedding requests the ingestion made, against the fewest the provider's
// batch limits allow for its chunks (inputs per request, tokens per request). Target: equal.
// Then the service against LangChain.js's documented pipeline on the same bytes, 300 and 2,000
// pages, with instant and with realistic embedding latency (bench/ingestion-langchain.ts).

const PAGES = 300;
const RUNS = Number(process.env.INGESTION_RUNS ?? 5);
const RATIO_MIN = 0.7;
const POLL_MS = 25;

/** Plain pdfjs-dist: open the document, read every page's text content, nothing else. */
export async function plainExtraction(
  bytes: Uint8Array,
): Promise<{ ms: number; pages: number; chars: number; texts: string[] }> {
  const pdfjs = await loadPdfjs(); // pdfjs-dist's legacy build with its worker in-process
  const t0 = performance.now();
  const task = pdfjs.getDocument({
    data: bytes.slice(), // pdfjs takes ownership of the buffer
    disableFontFace: true,
    useSystemFonts: false,
    standardFontDataUrl: standardFontsDir(),
    verbosity: pdfjs.VerbosityLevel.ERRORS,
  });
  const doc = await task.promise;
  let chars = 0;
  const texts: string[] = [];
  for (let n = 1; n <= doc.numPages; n++) {
    const page = await doc.getPage(n);
    const content = await page.getTextContent();
    let text = '';
    for (const item of content.items) if ('str' in item) text += item.hasEOL ? `${item.str}\n` : item.str;
    chars += text.length;
    texts.push(text);
    page.cleanup();
  }
  const pages = doc.numPages;
  await task.destroy();
  return { ms: performance.now() - t0, pages, chars, texts };
}

/** The pipeline's own chunker over already extracted page texts (what pdf-extract adds to pdfjs). */
function timeChunking(texts: string[], c: { CHUNK_TOKENS: number; CHUNK_OVERLAP_TOKENS: number }): number {
  const t0 = performance.now();
  const chunker = new Chunker({
    chunkTokens: c.CHUNK_TOKENS,
    overlapTokens: c.CHUNK_OVERLAP_TOKENS,
    countTokens: countTextTokens,
  });
  for (const [i, text] of texts.entries()) chunker.push(i + 1, normalizeText(text));
  chunker.finish();
  return performance.now() - t0;
}

export interface Ingested {
  ms: number;
  fileId: string;
  data: any;
  embeddingRequests: number;
  phases: { uploadMs: number; ingestCallMs: number; ingestCallStatus: number; pollMs: number };
  breakdown: Record<string, number>;
}

/** Upload → POST /message/pdf → completed, through the API; the time and the final status. */
export async function ingestThroughApi(
  svc: BenchService,
  token: string,
  bytes: Uint8Array,
  fileName: string,
  chatId?: string,
): Promise<Ingested> {
  const embeddingsBefore = svc.ai.count('/v1/embeddings');
  const t0 = performance.now();
  const wallStart = Date.now();
  const { fileId, downloadUrl } = await uploadPdf(svc, token, bytes, fileName);
  const uploadedAt = performance.now();
  const wallUploaded = Date.now();
  const started = await svc.api('POST', '/message/pdf', token, { url: downloadUrl, fileId, ...(chatId && { chatId }) });
  const answeredAt = performance.now();
  const wallAnswered = Date.now();
  if (started.status !== 200 && started.status !== 202)
    throw new Error(`POST /message/pdf: ${started.status} ${started.body}`);
  let data = started.json.data.embeddingsData;
  while (data.status === 'processing' || data.status === 'uploaded') {
    await new Promise((r) => setTimeout(r, POLL_MS));
    const res = await svc.api('GET', `/message/pdf/${fileId}`, token);
    if (res.status !== 200) throw new Error(`GET /message/pdf: ${res.status} ${res.body}`);
    data = res.json.data.embeddingsData;
  }
  const ms = performance.now() - t0;
  const wallDone = Date.now();
  if (data.status !== 'completed')
    throw new Error(`ingestion ended ${data.status}: ${JSON.stringify(data.failure ?? data)}`);
  return {
    ms,
    fileId,
    data,
    embeddingRequests: svc.ai.count('/v1/embeddings') - embeddingsBefore,
    phases: {
      uploadMs: uploadedAt - t0,
      ingestCallMs: answeredAt - uploadedAt,
      ingestCallStatus: started.status,
      pollMs: performance.now() - answeredAt,
    },
    // Where the time went, from the record's own timestamps (ms resolution).
    breakdown: {
      'upload (POST /upload, PUT)': wallUploaded - wallStart,
      'POST /message/pdf until the run started (checks, size probe, record, queue)':
        Date.parse(data.startedAt) - wallUploaded,
      'pdf-fetch (queue pickup, download, store)': data.timings.fetchMs,
      'pdf-extract (queue pickup, read, pdfjs, chunking, parts)': data.timings.extractMs,
      'pdf-embed (queue pickup, embeddings, chunk items, vectors, completion)': data.timings.embedMs,
      'completed → client told (wait loop, polling)': Math.max(wallAnswered, wallDone) - Date.parse(data.completedAt),
    },
  };
}

export const ingestion: Benchmark = {
  name: 'ingestion',
  title:
    'pages per second for the 300-page PDF (upload to completed) against plain pdfjs-dist extraction; embedding requests made',
  requires: () =>
    missingFiles(
      'functions/pdf-fetch.ts',
      'functions/pdf-extract.ts',
      'functions/pdf-embed.ts',
      'functions/create-upload.ts',
      'functions/ingest-pdf.ts',
      'test/helpers/make-pdf.ts',
    ),
  async run(ctx) {
    const svc = await ctx.service();
    const bytes = await makeTextPdf(PAGES);
    const { ChunkRepository } = await import('#shared/files/chunk-repository.ts');
    const { dynamo, tableName } = await import('#shared/clients.ts');
    const { config } = await import('#shared/config.ts');

    // Warm-up (not timed): the pipeline functions' imports, pdfjs, connections.
    ctx.log('ingestion: warm-up ingestion');
    const warm = await svc.signIn('bench-ingest-warmup@example.com');
    await ingestThroughApi(svc, warm.token, bytes, 'warmup.pdf');
    await plainExtraction(bytes);

    const plain: number[] = [];
    const chunking: number[] = [];
    const runs: Ingested[] = [];
    for (let i = 0; i < RUNS; i++) {
      ctx.log(`ingestion: run ${i + 1} of ${RUNS}`);
      const p = await plainExtraction(bytes);
      if (p.pages !== PAGES) throw new Error(`plain extraction read ${p.pages} pages`);
      plain.push(p.ms);
      chunking.push(timeChunking(p.texts, config()));
      // A new user each run: the same bytes of the same user would reuse the earlier embeddings.
      const user = await svc.signIn(`bench-ingest-${i}@example.com`);
      runs.push(await ingestThroughApi(svc, user.token, bytes, `bench-${PAGES}.pdf`));
    }
    const pagesPerSecond = (ms: number) => PAGES / (ms / 1000);
    const service = median(runs.map((r) => pagesPerSecond(r.ms)));
    const baseline = median(plain.map(pagesPerSecond));

    // The fewest requests the provider's limits allow for these chunks: by inputs per request,
    // and by tokens per request (exact counts from the chunker); whichever binds.
    const last = runs.at(-1)!;
    const chunkRepo = new ChunkRepository(dynamo(), tableName());
    let chunks = 0;
    let tokens = 0;
    for await (const page of chunkRepo.list(last.fileId)) {
      chunks += page.length;
      tokens += page.reduce((n, c) => n + c.tokens, 0);
    }
    const c = config();
    const minimum = Math.max(
      Math.ceil(chunks / c.EMBEDDING_BATCH_SIZE),
      Math.ceil(tokens / c.EMBEDDING_BATCH_MAX_TOKENS),
    );
    const requests = runs.map((r) => r.embeddingRequests);
    const phases = Object.keys(last.breakdown);

    // The loopback embedding server's own work for that one request, replayed here: what the
    // embed stage waits for that a real provider would spend on its side instead.
    const inputs = svc.ai.embeddingRequests().at(-1)?.input ?? [];
    const serverMs = median(
      [0, 1, 2].map(() => {
        const t = performance.now();
        const data = (Array.isArray(inputs) ? inputs : [inputs]).map((text, index) => {
          const v = lexicalEmbedding(text, svc.ai.embeddingDimensions);
          return {
            object: 'embedding',
            index,
            embedding: Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64'),
          };
        });
        JSON.stringify({ object: 'list', data });
        return performance.now() - t;
      }),
    );

    const vs = await againstLangChain(ctx, svc);
    return {
      checks: [
        ratioCheck(`${PAGES}-page PDF, upload → completed`, service, baseline, 'pages/s', { min: RATIO_MIN }),
        info('end to end, median', median(runs.map((r) => r.ms)), 'ms', {
          baseline: median(plain),
          ratio: median(runs.map((r) => r.ms)) / median(plain),
        }),
        absoluteCheck(
          'embedding requests per ingestion',
          Math.max(...requests),
          'requests',
          { eq: minimum },
          { baseline: minimum, ratio: Math.max(...requests) / minimum },
        ),
        info('chunks', chunks, ''),
        info('chunk tokens (exact)', tokens, ''),
        ...vs.checks,
      ],
      details: [
        {
          title: "where the time goes (ms, median of the runs; the record's timestamps)",
          header: ['phase', 'ms', 'share'],
          rows: [
            ...phases.map((k) => {
              const ms = median(runs.map((r) => r.breakdown[k]!));
              return [k, ms, `${((ms / median(runs.map((r) => r.ms))) * 100).toFixed(0)} %`];
            }),
            ['for scale: plain pdfjs-dist extraction of the same bytes', median(plain), ''],
            ["for scale: the pipeline's chunker (sentences, cl100k token counts) over that text", median(chunking), ''],
            ["for scale: the loopback embedding server's own work for the one request (replayed)", serverMs, ''],
          ],
        },
        ...(vs.details ?? []),
      ],
      notes: [
        `${RUNS} runs each, interleaved, after one warm-up; median. Baseline: pdfjs-dist getDocument + getTextContent of every page of the same bytes in the same process.`,
        `Minimum requests = max(⌈chunks / ${c.EMBEDDING_BATCH_SIZE} inputs⌉, ⌈tokens / ${c.EMBEDDING_BATCH_MAX_TOKENS}⌉) (EMBEDDING_BATCH_SIZE, EMBEDDING_BATCH_MAX_TOKENS: OpenAI's limits).`,
        ...(vs.notes ?? []),
      ],
      data: {
        plainMs: plain,
        chunkingMs: chunking,
        serviceMs: runs.map((r) => r.ms),
        breakdowns: runs.map((r) => r.breakdown),
        phases: runs.map((r) => r.phases),
        embeddingRequests: requests,
        chunks,
        tokens,
        minimum,
        last: last.data,
        vsLangChain: vs.data,
      },
    };
  },
};
