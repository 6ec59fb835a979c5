import './lib/env.ts';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { projectRoot, startLocalRuntime } from '../infra/local/runtime.ts';
import { signLocalIdToken } from '../infra/local/local-idp.ts';
import { mapLimit } from '#shared/dynamo.ts';
import { EVAL_DOCUMENTS, EVAL_QUESTIONS, type EvalQuestion } from './eval-questions.ts';
import { accurate, type Box, coverage, PdfLayout } from './lib/glyph-boxes.ts';
import { apiRequest, keepAliveAgent, request } from './lib/http.ts';
import { evalFigures, type ScoredQuestion } from './lib/eval-metrics.ts';
import { makeJudge } from './lib/eval-judge.ts';
import { createAiProvider, describeAiProvider } from '#shared/ai/provider.ts';
import { chosenProvider } from '#shared/config/all.ts';
import { renderTable } from './lib/report.ts';
import { gitCommit, writeResult } from './lib/results.ts';
import { startEmulatorsProcess } from './lib/service.ts';

// `npm run eval [-- --label <name>]`: answer quality over the fixture PDFs, against the
// configured AI provider (offline unless OPENAI_API_KEY, or another provider, is set in the
// environment). The service runs as under `npm start` (emulators in a child process); the
// documents are uploaded and ingested through the API; every question gets a new file chat
// holding all of them, asks its earlier turns (follow-ups) and then the question itself.
// Figures, over the measured questions:
//   recall@k   share of questions with a source on an answering page among the first k sources
//   MRR        mean of 1 / rank of the first source on an answering page (0 when none)
//   cited      share of questions where a source the reply cites is on an answering page
//   markers    share of the reply's [n] markers that point at a source on an answering page
//   page accuracy  share of the cited sources whose page is an answering page
//   verified   share of the sources whose quote the service verified on its page (`verified`)
//   box accuracy   share of the sources whose `boxes` cover every glyph of their quote and are
//              at most 3 × the area of its lines; the glyphs are the eval's own ground truth
//              from pdf.js's text items of the page (bench/lib/glyph-boxes.ts), over the sources whose quote
//              it finds there (for the scan: the text PDF it was drawn from)
// Results go to bench/results/eval-<label>.json (default label: latest).

const K = Number(process.env.RETRIEVAL_K ?? 8);
const RECALL_AT = [1, 3, 5, 8].filter((k) => k <= K);
const POLL_MS = 25;
const CONCURRENCY = 4;

interface SourceOut {
  fileName?: string;
  page: number;
  quote: string;
  cited?: boolean;
  verified?: boolean;
  boxes?: Box[];
}

interface Outcome {
  id: string;
  question: string;
  followUp: boolean;
  pages: number[];
  sourcePages: string[];
  firstHit: number | undefined;
  citedHit: boolean | undefined;
  markers: number;
  markersOnAnswer: number;
  /** Sources the reply cites, and those of them on an answering page. */
  cited: number;
  citedOnAnswer: number;
  sources: number;
  verified: number;
  /** Sources whose quote the eval found on their page's text items, and those of them boxed accurately. */
  boxTruths: number;
  boxesAccurate: number;
  /** Each source: verified (v), boxes accurate (b), no ground truth (–). */
  sourceChecks: string[];
  /** The sources whose boxes were not accurate, with how far off they were. */
  boxMisses: { source: string; quote: string; covered: number; areaRatio: number }[];
  /** What the figures of eval-metrics.ts are computed from. */
  scored: ScoredQuestion;
  split: EvalQuestion['split'];
}

/** One retry when a kept-alive connection was closed under us (ECONNRESET), as a browser would. */
async function send(url: string, init: Parameters<typeof request>[1]) {
  try {
    return await request(url, init);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') throw err;
    return request(url, init);
  }
}

const label = (() => {
  const i = process.argv.indexOf('--label');
  return i >= 0 ? (process.argv[i + 1] ?? 'latest') : 'latest';
})();

/** The 1-based [n] markers of a reply (also [1, 2] and [1][2]). */
export function markersOf(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(/\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g))
    for (const n of m[1]!.split(',')) out.push(Number(n.trim()));
  return out;
}

async function main() {
  const started = performance.now();
  process.env.RETRIEVAL_K ??= String(K);
  // Ingestion answers 202 at once and is polled: a busy machine must not turn it into a gateway timeout.
  process.env.PDF_SYNC_WAIT_MS ??= '0';
  const emulators = await startEmulatorsProcess();
  const dataDir = await mkdtemp(join(tmpdir(), 'eval-'));
  const runtime = await startLocalRuntime({
    port: 0,
    dataDir,
    persist: false,
    emulators,
    resourcePrefix: 'eval-',
    log: false,
    retryDelaySeconds: 1,
    // One evaluator asks more than a person would: no per-user rate limits or token budget (0 = off).
    env: {
      LOG_LEVEL: 'SILENT',
      RATE_LIMIT_MESSAGES_PER_MINUTE: '0',
      RATE_LIMIT_INGESTIONS_PER_MINUTE: '0',
      RATE_LIMIT_UPLOADS_PER_MINUTE: '0',
      DAILY_TOKEN_BUDGET: '0',
      REPLIES_MAX_IN_FLIGHT_PER_USER: '0',
    },
  });
  const agent = keepAliveAgent();
  const layouts = new Map<string, PdfLayout>(); // each document's glyphs, for the box ground truth
  const api = async (method: string, path: string, token?: string, body?: unknown) => {
    const res = await send(`${runtime.url}${path}`, apiRequest(method, token, body, agent));
    const json = res.body ? (JSON.parse(res.body) as any) : undefined;
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${res.body}`);
    return json;
  };
  try {
    const offline = chosenProvider(runtime.config) === 'offline';
    const provider = offline ? 'offline (extractive replies, lexical embeddings)' : describeAiProvider(runtime.config);
    const model = offline ? undefined : await createAiProvider(runtime.config);
    process.stderr.write(`[eval] provider: ${provider}; k = ${K}; ${EVAL_QUESTIONS.length} questions\n`);
    const idToken = await signLocalIdToken(dataDir, { email: 'eval@example.com' });
    const token: string = (await api('POST', '/auth', idToken)).data.token;

    // Ingest each document once; each question's chat attaches the completed files.
    const files: { fileId: string; fileName: string; downloadUrl: string }[] = [];
    for (const document of EVAL_DOCUMENTS) {
      const { fileName } = document;
      const bytes = await document.pdf();
      if (document.layout) layouts.set(fileName, new PdfLayout(await document.layout()));
      const upload = (
        await api('POST', '/upload', token, { fileName, contentType: 'application/pdf', size: bytes.byteLength })
      ).data;
      const put = await send(upload.uploadUrl, { method: 'PUT', headers: upload.uploadHeaders, body: bytes });
      if (put.status !== 200) throw new Error(`upload of ${fileName}: ${put.status}`);
      let data = (await api('POST', '/message/pdf', token, { url: upload.downloadUrl, fileId: upload.fileId })).data
        .embeddingsData;
      while (data.status === 'processing' || data.status === 'uploaded') {
        await new Promise((r) => setTimeout(r, POLL_MS));
        data = (await api('GET', `/message/pdf/${upload.fileId}`, token)).data.embeddingsData;
      }
      if (data.status !== 'completed') throw new Error(`${fileName} ended ${data.status}`);
      process.stderr.write(`[eval] ingested ${fileName}: ${data.pages} pages, ${data.chunks} chunks\n`);
      files.push({ fileId: upload.fileId, fileName, downloadUrl: upload.downloadUrl });
    }

    // The configured model as judge (groundedness and relevance, prompts in bench/lib/eval-judge.ts).
    const judge = model && makeJudge(model);
    const ask = async (q: EvalQuestion): Promise<Outcome> => {
      const chatId: string = (await api('POST', '/chat', token, { name: q.id, type: 'file' })).data.id;
      for (const f of files) await api('POST', '/message/pdf', token, { url: f.downloadUrl, fileId: f.fileId, chatId });
      for (const prompt of q.before ?? []) await api('POST', '/message/logged-in', token, { chatId, prompt });
      const asked = performance.now();
      const data = (await api('POST', '/message/logged-in', token, { chatId, prompt: q.question })).data;
      const latencyMs = performance.now() - asked;
      const sources: SourceOut[] = data.sources ?? [];
      const answers = (s: SourceOut | undefined) => !!s && s.fileName === q.file && q.pages.includes(s.page);
      const rank = sources.findIndex(answers);
      const markers = markersOf(data.response);
      const flagged = sources.some((s) => s.cited !== undefined);
      const cited = sources.filter((s) => s.cited);
      const checks = await Promise.all(
        sources.map(async (s) => {
          const glyphs = await layouts.get(s.fileName ?? '')?.quoteGlyphs(s.page, s.quote);
          const cover = glyphs && coverage(s.boxes ?? [], glyphs);
          return { source: s, verified: s.verified === true, cover, boxes: cover ? accurate(cover) : undefined };
        }),
      );
      const scored: ScoredQuestion = {
        file: q.file,
        pages: q.pages,
        sources: sources.map((s) => ({ fileName: s.fileName, page: s.page, verified: s.verified === true })),
        answer: String(data.response ?? ''),
        latencyMs,
        judge: judge ? await judge(q.question, String(data.response ?? ''), sources) : undefined,
      };
      return {
        scored,
        split: q.split,
        id: q.id,
        question: q.question,
        followUp: !!q.before?.length,
        pages: q.pages,
        sourcePages: sources.map((s) => `${s.fileName === q.file ? '' : `${s.fileName}:`}${s.page}`),
        firstHit: rank >= 0 ? rank + 1 : undefined,
        citedHit: flagged ? sources.some((s) => s.cited && answers(s)) : undefined,
        markers: markers.length,
        markersOnAnswer: markers.filter((n) => answers(sources[n - 1])).length,
        cited: cited.length,
        citedOnAnswer: cited.filter(answers).length,
        sources: sources.length,
        verified: checks.filter((c) => c.verified).length,
        boxTruths: checks.filter((c) => c.boxes !== undefined).length,
        boxesAccurate: checks.filter((c) => c.boxes).length,
        boxMisses: checks
          .filter((c) => c.boxes === false)
          .map(({ source, cover }) => ({
            source: `${source.fileName}:${source.page}`,
            quote: source.quote,
            covered: cover!.covered,
            areaRatio: cover!.areaRatio,
          })),
        sourceChecks: checks.map(
          (c) => `${c.verified ? 'v' : ''}${c.boxes === undefined ? '–' : c.boxes ? 'b' : ''}` || '·',
        ),
      };
    };

    // A few chats at once (each question's chat is its own, so the answers do not depend on the order).
    const outcomes = await mapLimit(EVAL_QUESTIONS, CONCURRENCY, ask);

    const share = (xs: boolean[]) => (xs.length ? xs.filter(Boolean).length / xs.length : Number.NaN);
    const figures = (set: Outcome[]) => {
      const recall = Object.fromEntries(
        RECALL_AT.map((k) => [`recall@${k}`, share(set.map((o) => o.firstHit !== undefined && o.firstHit <= k))]),
      );
      const mrr = set.reduce((n, o) => n + (o.firstHit ? 1 / o.firstHit : 0), 0) / set.length;
      const flagged = set.filter((o) => o.citedHit !== undefined);
      const markers = set.reduce((n, o) => n + o.markers, 0);
      const sum = (key: keyof Outcome) => set.reduce((n, o) => n + (o[key] as number), 0);
      const ratio = (part: keyof Outcome, whole: keyof Outcome) => (sum(whole) ? sum(part) / sum(whole) : Number.NaN);
      return {
        questions: set.length,
        ...recall,
        MRR: mrr,
        'cited on answer': flagged.length ? share(flagged.map((o) => o.citedHit!)) : Number.NaN,
        'markers on answer': markers ? set.reduce((n, o) => n + o.markersOnAnswer, 0) / markers : Number.NaN,
        markers,
        'page accuracy': ratio('citedOnAnswer', 'cited'),
        verified: ratio('verified', 'sources'),
        'box accuracy': ratio('boxesAccurate', 'boxTruths'),
        cited: sum('cited'),
        sources: sum('sources'),
        'boxes checked': sum('boxTruths'),
      };
    };
    const all = figures(outcomes);
    const followUps = figures(outcomes.filter((o) => o.followUp));
    const pct = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? '–' : `${(v * 100).toFixed(1)} %`);
    const metricNames = [
      ...RECALL_AT.map((k) => `recall@${k}`),
      'MRR',
      'cited on answer',
      'markers on answer',
      'page accuracy',
      'verified',
      'box accuracy',
    ];
    const byDocument = EVAL_DOCUMENTS.map(({ fileName }) => ({
      fileName,
      figures: figures(outcomes.filter((o) => EVAL_QUESTIONS.find((q) => q.id === o.id)?.file === fileName)),
    })).filter((d) => d.figures.questions > 0);
    const durationMs = performance.now() - started;

    console.log(
      `\n== eval: ${EVAL_QUESTIONS.length} questions over ${EVAL_DOCUMENTS.map((d) => d.fileName).join(', ')} (provider ${provider}, k = ${K}, ${(durationMs / 1000).toFixed(1)} s)`,
    );
    console.log(
      renderTable(
        ['metric', 'all', 'follow-ups'],
        metricNames.map((m) => [
          m,
          m === 'MRR' ? all.MRR.toFixed(3) : pct((all as any)[m]),
          m === 'MRR' ? followUps.MRR.toFixed(3) : pct((followUps as any)[m]),
        ]),
        (i) => i > 0,
      ),
    );
    console.log(
      `markers in replies: ${all.markers}; cited sources: ${all.cited}; sources: ${all.sources}, their boxes checked against the eval's glyphs: ${all['boxes checked']}`,
    );
    console.log(
      `\n-- by document (the questions about it)\n${renderTable(
        ['document', 'questions', 'recall@3', 'page accuracy', 'verified', 'box accuracy', 'boxes checked'],
        byDocument.map(({ fileName, figures: f }) => [
          fileName,
          f.questions,
          pct((f as any)['recall@3']),
          pct(f['page accuracy']),
          pct(f.verified),
          pct(f['box accuracy']),
          f['boxes checked'],
        ]),
        (i) => i > 0,
      )}`,
    );
    console.log(
      `\n-- per question\n${renderTable(
        ['question', 'answering pages', 'sources (pages, in order)', 'first hit', 'checks (v verified, b boxes)'],
        outcomes.map((o) => [
          o.id,
          o.pages.join(','),
          o.sourcePages.join(' '),
          o.firstHit ?? '–',
          o.sourceChecks.join(' '),
        ]),
      )}`,
    );

    const git = gitCommit();
    const file = await writeResult(
      `eval-${label.replace(/[^\w.-]/g, '_')}.json`,
      `${JSON.stringify({ ranAt: new Date().toISOString(), durationMs: Math.round(durationMs), ...(git && { commit: git }), provider, k: K, machine: { node: process.version, cpus: cpus().length }, figures: { all, followUps, byDocument }, outcomes }, null, 2)}\n`,
    );
    console.log(`results: ${file}`);
    await publish({ label, git, provider, runtimeConfig: runtime.config, outcomes, durationMs });
  } finally {
    agent.destroy();
    for (const layout of layouts.values()) await layout.close();
    await runtime.stop();
    await emulators.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();

/** The figures by split as a Markdown table (bench/results/eval-<label>.md), and the README's copy of it. */
async function publish(run: {
  label: string;
  git: string | undefined;
  provider: string;
  runtimeConfig: {
    RERANK_PROVIDER: string;
    RERANK_CANDIDATES: number;
    BEDROCK_RERANK_MODEL: string;
    RERANK_MODEL: string;
  };
  outcomes: Outcome[];
  durationMs: number;
}) {
  const c = run.runtimeConfig;
  const reranker =
    c.RERANK_PROVIDER === 'none'
      ? 'none'
      : `${c.RERANK_PROVIDER}${c.RERANK_PROVIDER === 'bedrock' ? ` (${c.BEDROCK_RERANK_MODEL})` : c.RERANK_PROVIDER === 'cohere' ? ` (${c.RERANK_MODEL})` : ''}, top ${c.RERANK_CANDIDATES}`;
  const sets = [
    ['all', run.outcomes],
    ['dev', run.outcomes.filter((o) => o.split === 'dev')],
    ['held-out', run.outcomes.filter((o) => o.split === 'held-out')],
  ] as const;
  const f = sets.map(([, set]) => evalFigures(set.map((o) => o.scored)));
  const num = (v: number, digits = 3) => (Number.isNaN(v) ? '–' : v.toFixed(digits));
  const rows: [string, (x: (typeof f)[number]) => string][] = [
    ['questions', (x) => String(x.questions)],
    ...[1, 3, 5, 8].map((k): [string, (x: (typeof f)[number]) => string] => [
      `recall@${k}`,
      (x) => num(x.recall[k] ?? Number.NaN),
    ]),
    ['MRR', (x) => num(x.mrr)],
    ['citation precision', (x) => `${num(x.citationPrecision)} (${x.markers} markers)`],
    ['answer length, median chars', (x) => String(x.answerChars)],
    ['latency p50 / p95, ms', (x) => `${num(x.latencyP50, 0)} / ${num(x.latencyP95, 0)}`],
    ['groundedness (judge, 1–5)', (x) => (x.judged ? num(x.groundedness, 2) : 'no model')],
    ['relevance (judge, 1–5)', (x) => (x.judged ? num(x.relevance, 2) : 'no model')],
  ];
  const table = [
    `| metric | ${sets.map(([name]) => name).join(' | ')} |`,
    `|---|${sets.map(() => '---').join('|')}|`,
    ...rows.map(([name, value]) => `| ${name} | ${f.map(value).join(' | ')} |`),
  ].join('\n');
  const head = `provider ${run.provider}; reranker ${reranker}; k = ${K}; commit ${run.git ?? 'unknown'}; ${new Date().toISOString().slice(0, 10)}; ${(run.durationMs / 1000).toFixed(0)} s`;
  const md = `# eval: ${run.label}\n\n${head}\n\n${table}\n`;
  await writeResult(`eval-${run.label.replace(/[^\w.-]/g, '_')}.md`, md);
  console.log(`\n${head}\n${table}`);
  // The README shows the latest run's table between its markers.
  const readme = join(projectRoot, 'bench/README.md');
  const text = await readFile(readme, 'utf8');
  const start = '<!-- eval:latest -->';
  const end = '<!-- /eval:latest -->';
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a >= 0 && b > a)
    await writeFile(readme, `${text.slice(0, a + start.length)}\n${head}\n\n${table}\n${text.slice(b)}`);
}
