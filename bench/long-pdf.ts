import './lib/env.ts';
import { execFile } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
import { makeTextPdf } from '../test/helpers/make-pdf.ts';
import type { Benchmark } from './lib/context.ts';
import { info, median } from './lib/report.ts';
import { startingEnv } from './lib/env.ts';
import { startBenchService, TSX_CLI, type BenchService } from './lib/service.ts';
import { ingestThroughApi, plainExtraction } from './ingestion.ts';
import { planRanges } from '#shared/pdf/page-ranges.ts';
import { localConcurrency } from '../infra/local/runtime.ts';
import { pipelineStages } from '../infra/routes.ts';

// One long PDF: wall time from POST /upload to `completed` for a 2,000-page PDF read whole by one
// invocation (a service whose range is longer than the document), in as many ranges at once as
// this machine has cores, and in ranges of PDF_EXTRACT_PAGES_PER_RANGE pages (the default, 256:
// 8 ranges); one range's worth of pages (256) for scale. Plain pdfjs-dist over the 2,000
// pages in this process is the floor of a reader that reads them one after another.
// On Lambda each range is its own instance; here the ranges share this machine's cores, so the
// gain is bounded by them (reported beside the figures), and the local runtime runs no more
// pdf-extract instances at once than there are cores (localConcurrency, infra/local/runtime.ts).

const PAGES = Number(process.env.LONG_PDF_PAGES ?? 2000);
const RANGE_PAGES = 256;
const RUNS = Number(process.env.LONG_PDF_RUNS ?? 2);
const execFileAsync = promisify(execFile);

async function ingest(svc: BenchService, bytes: Uint8Array, label: string, run: number) {
  const user = await svc.signIn(`bench-long-${label}-${run}@example.com`); // a new user: nothing reused
  return ingestThroughApi(svc, user.token, bytes, `${label}.pdf`);
}

interface Measured {
  longMs: number;
  oneRangeMs: number;
  /** The long PDF's phases (the record's timestamps). */
  phases: Record<string, number>;
}

/**
 * In a process of its own (a runtime's functions keep the endpoints and settings of the first
 * runtime of their process): a service reading in ranges of `rangePages`, warmed by one
 * ingestion, then the long PDF and one range's worth, each by a new user (nothing reused).
 */
async function measure(rangePages: number, run: number): Promise<Measured> {
  const { stdout } = await execFileAsync(process.execPath, [TSX_CLI, import.meta.filename, '--measure'], {
    env: { ...startingEnv, LONG_PDF_RANGE_PAGES: String(rangePages), LONG_PDF_RUN: String(run) } as NodeJS.ProcessEnv,
    maxBuffer: 1024 * 1024,
  });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

async function measureHere(): Promise<Measured> {
  const rangePages = Number(process.env.LONG_PDF_RANGE_PAGES);
  const run = Number(process.env.LONG_PDF_RUN);
  const [long, short] = await Promise.all([makeTextPdf(PAGES), makeTextPdf(RANGE_PAGES)]);
  const svc = await startBenchService({ PDF_EXTRACT_PAGES_PER_RANGE: String(rangePages) });
  try {
    // Warm-up: the long PDF once, so that every instance a range needs has its imports, pdf.js
    // child and connections (on Lambda, warm instances), as the instance reading whole has.
    await ingest(svc, long, `warm-${rangePages}`, run);
    const measured = await ingest(svc, long, `long-${rangePages}`, run);
    const oneRange = await ingest(svc, short, `short-${rangePages}`, run);
    return { longMs: measured.ms, oneRangeMs: oneRange.ms, phases: measured.breakdown };
  } finally {
    await svc.stop();
  }
}

if (process.argv.includes('--measure')) {
  console.log(JSON.stringify(await measureHere()));
  process.exit(0);
}

export const longPdf: Benchmark = {
  name: 'long-pdf',
  title: `one ${PAGES}-page PDF, upload → completed: read whole, in as many ranges as this machine has cores, and in ranges of ${RANGE_PAGES} pages`,
  async run(ctx) {
    const long = await makeTextPdf(PAGES);
    const cores = availableParallelism();
    const blocks = (pages: number) => Math.ceil(pages / 32) * 32;
    // Read whole: ranges longer than the document, so one invocation reads it all.
    const variants = [
      { name: 'whole', rangePages: blocks(PAGES + 1) },
      { name: 'cores', rangePages: blocks(PAGES / cores) },
      { name: 'default', rangePages: RANGE_PAGES },
    ];
    const measured = new Map<string, Measured[]>(variants.map((v) => [v.name, []]));
    const plain: number[] = [];
    for (let run = 1; run <= RUNS; run++) {
      for (const v of variants) {
        ctx.log(`long-pdf: run ${run} of ${RUNS}, ${v.name} (ranges of ${v.rangePages})`);
        measured.get(v.name)!.push(await measure(v.rangePages, run));
      }
      plain.push((await plainExtraction(long)).ms);
    }
    const longMs = (name: string) => median(measured.get(name)!.map((m) => m.longMs));
    const whole = longMs('whole');
    const ranges = (rangePages: number) => planRanges(PAGES, rangePages).length;
    return {
      checks: [
        info(`${PAGES} pages read whole (one invocation)`, whole, 'ms'),
        info(
          `${PAGES} pages in ${ranges(variants[1]!.rangePages)} ranges at once (one per core)`,
          longMs('cores'),
          'ms',
          {
            baseline: whole,
            ratio: longMs('cores') / whole,
          },
        ),
        info(`${PAGES} pages in ${ranges(RANGE_PAGES)} ranges at once (the default)`, longMs('default'), 'ms', {
          baseline: whole,
          ratio: longMs('default') / whole,
        }),
        info(
          `${RANGE_PAGES} pages (one range's worth, the default service)`,
          median(measured.get('default')!.map((m) => m.oneRangeMs)),
          'ms',
        ),
        info(`plain pdfjs-dist over the ${PAGES} pages (this process)`, median(plain), 'ms'),
      ],
      details: [
        {
          title: "where the time goes (ms, median; the record's timestamps)",
          header: ['phase', ...variants.map((v) => v.name)],
          rows: Object.keys(measured.get('whole')![0]!.phases).map((phase) => [
            phase,
            ...variants.map((v) => median(measured.get(v.name)!.map((m) => m.phases[phase]!))),
          ]),
        },
      ],
      notes: [
        `${RUNS} runs; in each, every variant in a process of its own, warmed by one ingestion of the long PDF (every instance it needs); median. A new user per ingestion (nothing reused).`,
        `This machine has ${cores} cores, and a document read whole already keeps two busy (pdf.js in the child, chunking in the function): ranges beyond the cores only add each range's opening of the document, and the local runtime reads ${localConcurrency(pipelineStages['pdf-extract'])} at once. On Lambda each range is an instance of its own (up to pdf-extract's maxConcurrency).`,
      ],
      data: { ...Object.fromEntries(measured), plainMs: plain, cores },
    };
  },
};
