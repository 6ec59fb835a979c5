import './lib/env.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Benchmark, BenchContext } from './lib/context.ts';
import { checksTable, renderResult, type BenchResult, type Check } from './lib/report.ts';
import { gitCommit, writeResult } from './lib/results.ts';
import { startBenchService, type BenchService } from './lib/service.ts';
import { coldStart } from './cold-start.ts';
import { memory } from './memory.ts';
import { requestOverhead } from './request-overhead.ts';
import { streaming } from './streaming.ts';
import { retrieval } from './retrieval.ts';
import { ingestion } from './ingestion.ts';
import { load } from './load.ts';
import { hostile } from './hostile.ts';
import { ocr } from './ocr.ts';
import { search } from './search.ts';
import { bulkIngestion } from './bulk-ingestion.ts';
import { vectorStore } from './vector-store.ts';
import { longPdf } from './long-pdf.ts';
import { largePdfBench } from './large-pdf.ts';
import { formats } from './formats.ts';
import { programs } from './programs.ts';

// `npm run bench` runs every benchmark; `npm run bench -- <name> [<name> ...]` runs some.
// Each prints its table as it finishes; all of them go to bench/results/latest.json.
// Benchmarks that start no service run first, so the builds do not compete with it.

const benchmarks: Benchmark[] = [
  coldStart,
  memory,
  hostile,
  formats,
  requestOverhead,
  streaming,
  programs,
  ocr,
  retrieval,
  vectorStore,
  search,
  ingestion,
  bulkIngestion,
  longPdf,
  largePdfBench,
  load,
];

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('--list')) {
  console.log('npm run bench [-- <name> ...]\n');
  for (const b of benchmarks) console.log(`  ${b.name.padEnd(18)} ${b.title}`);
  process.exit(0);
}
const unknown = args.filter((a) => !benchmarks.some((b) => b.name === a));
if (unknown.length) {
  console.error(`Unknown benchmark: ${unknown.join(', ')}. Known: ${benchmarks.map((b) => b.name).join(', ')}`);
  process.exit(2);
}
const selected = args.length ? benchmarks.filter((b) => args.includes(b.name)) : benchmarks;

const started = performance.now();
const tmpDir = await mkdtemp(join(tmpdir(), 'bench-run-'));
let service: Promise<BenchService> | undefined;
const ctx: BenchContext = {
  tmpDir,
  service: () => (service ??= startBenchService()),
  log: (line) => process.stderr.write(`[bench] ${line}\n`),
};

const results: BenchResult[] = [];
try {
  for (const b of selected) {
    const t0 = performance.now();
    const base = { name: b.name, title: b.title, checks: [] as Check[], details: [], notes: [] };
    const waiting = await b.requires?.();
    let result: BenchResult;
    if (waiting) {
      result = { ...base, status: 'skipped', reason: waiting, durationMs: 0 };
    } else {
      ctx.log(`${b.name}: running`);
      try {
        const out = await b.run(ctx);
        result = {
          ...base,
          ...out,
          details: out.details ?? [],
          notes: out.notes ?? [],
          status: 'ok',
          durationMs: performance.now() - t0,
        };
      } catch (err) {
        const e = err as Error;
        result = { ...base, status: 'error', reason: e.stack ?? e.message, durationMs: performance.now() - t0 };
      }
    }
    results.push(result);
    console.log(`\n${renderResult(result)}`);
  }
} finally {
  if (service) await (await service.catch(() => undefined))?.stop();
  await rm(tmpDir, { recursive: true, force: true });
}

// The summary: every figure that has a target, across benchmarks.
const targeted = results.flatMap((r) =>
  r.checks.filter((c) => c.pass !== undefined).map((c) => ({ ...c, metric: `${r.name}: ${c.metric}` })),
);
const missed = targeted.filter((c) => !c.pass);
console.log(`\n== summary (${((performance.now() - started) / 1000).toFixed(0)} s)`);
if (targeted.length) console.log(checksTable(targeted));
const skipped = results.filter((r) => r.status === 'skipped');
const failed = results.filter((r) => r.status === 'error');
for (const r of skipped) console.log(`skipped ${r.name}: ${r.reason}`);
for (const r of failed) console.log(`FAILED ${r.name}: ${r.reason?.split('\n')[0]}`);
console.log(
  `${targeted.length - missed.length} of ${targeted.length} targets met${missed.length ? `; missed: ${missed.map((c) => c.metric).join('; ')}` : ''}`,
);

const git = gitCommit();
const file = await writeResult(
  'latest.json',
  `${JSON.stringify(
    {
      ranAt: new Date().toISOString(),
      durationMs: Math.round(performance.now() - started),
      selected: selected.map((b) => b.name),
      machine: {
        node: process.version,
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model,
        memoryBytes: totalmem(),
        loadAverage: loadavg(),
      },
      ...(git && { commit: git }),
      summary: {
        targets: targeted.length,
        met: targeted.length - missed.length,
        missed: missed.map((c) => c.metric),
        skipped: skipped.map((r) => r.name),
        failed: failed.map((r) => r.name),
      },
      benchmarks: Object.fromEntries(results.map((r) => [r.name, r])),
    },
    null,
    2,
  )}\n`,
);
console.log(`results: ${file}`);
process.exitCode = failed.length ? 1 : 0;
