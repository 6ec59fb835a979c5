import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { logger } from '../logger.ts';
import type { ContentLimits } from './content-budget.ts';
import type { ChildJob, ChildMessage } from './extract-child.ts';
import type { ExtractResult } from './extract.ts';
import { PermanentFailure, RetryableFailure } from '../files/failures.ts';
import type { TextVerdict } from './text-quality.ts';

// Text extraction with a bound on what one document may cost (docs/DECISIONS.md, Hostile
// documents). pdf.js runs in a child process, never in the function's own: a document can exhaust
// the heap of whatever process reads it, or trip a V8 fatal error that no try/catch sees (a
// ToUnicode CMap with a few ranges of 2^24 codes does), and a worker thread would take the whole
// process down with it. The child gets a heap cap (--max-old-space-size) below the function's
// memory; the parent watches its resident size (heap plus the buffers pdf.js inflates outside it)
// and its time per page and per document, and kills it past any limit. Every way the child can end
// without an answer — killed for a limit, out of memory, a fatal error — is the typed failure
// TOO_COMPLEX, recorded by this (surviving) process. Pages come back one by one as they are read,
// so chunking and embedding still overlap with extraction.
//
// The child is `extract-child.mjs` beside the bundle (infra/build.ts ships it with pdf-extract);
// from sources (tests, npm start) it is bundled on first use into node_modules/.cache with
// esbuild, dependencies left external, so pdf.js loads as plain Node modules in the child.

export interface ExtractLimits {
  /** Old-space heap of the child (MB). */
  heapMb: number;
  /** The child is killed when its resident size exceeds this (MB). */
  rssMb: number;
  /** Longest one page may take once the document is open (ms). */
  pageMs: number;
  /** Longest the whole document may take, opening included (ms). */
  documentMs: number;
  content: ContentLimits;
}

interface BoundedExtractOptions {
  maxPages: number;
  limits: ExtractLimits;
  /** Called with each page's normalised text ('' when unusable) and its quality verdict, in page order (awaited, one at a time). */
  onPage: (page: number, text: string, verdict: TextVerdict) => void | Promise<void>;
  /** Called once with the document's page count, before the first page (awaited). */
  onDocument?: (pages: number) => void | Promise<void>;
  /** Called once the child is gone, with its peak resident size (for the benchmark). */
  onStats?: (stats: { childPeakRssMb?: number }) => void;
}

interface BoundedExtractResult extends ExtractResult {
  /** Peak resident size of the child (MB), where the platform reports it (Linux). */
  childPeakRssMb?: number;
}

const WATCH_INTERVAL_MS = 50;
const STDERR_TAIL = 2048;

const tooComplex = (what: string) => new PermanentFailure('TOO_COMPLEX', `The PDF is too complex to process: ${what}`);

let devChild: Promise<string> | undefined;

/** The child's script: beside the bundle, or bundled now from the sources. */
function childScript(): Promise<string> {
  const beside = new URL('./extract-child.mjs', import.meta.url);
  if (existsSync(beside)) return Promise.resolve(fileURLToPath(beside));
  devChild ??= bundleChildFromSources();
  devChild.catch(() => (devChild = undefined));
  return devChild;
}

async function bundleChildFromSources(): Promise<string> {
  const source = fileURLToPath(new URL('./extract-child.ts', import.meta.url));
  const dir = join(resolve(dirname(source), '../..'), 'node_modules/.cache/extract-child');
  await mkdir(dir, { recursive: true });
  const out = join(dir, 'extract-child.mjs');
  const tmp = `${out}.${process.pid}.tmp`;
  // A computed specifier, so that bundling this module never pulls esbuild into a bundle.
  const esbuild = 'esbuild';
  const { build } = (await import(esbuild)) as typeof import('esbuild');
  await build({
    entryPoints: [source],
    bundle: true,
    format: 'esm',
    platform: 'node',
    packages: 'external',
    outfile: tmp,
    logLevel: 'silent',
  });
  await rename(tmp, out); // atomic: a concurrent process forks either file, never half of one
  return out;
}

/** Resident and peak resident size of a process (kB), from /proc (Linux only). */
async function residentKb(pid: number): Promise<{ rss: number; peak: number } | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s*(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
    return { rss: field('VmRSS'), peak: field('VmHWM') };
  } catch {
    return undefined;
  }
}

/** The environment of the child: the parent's, without loaders it does not need (tsx, jest). */
function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  const options = (env.NODE_OPTIONS ?? '').split(/\s+/).filter((o) => o === '--enable-source-maps');
  if (options.length) env.NODE_OPTIONS = options.join(' ');
  else delete env.NODE_OPTIONS;
  return env;
}

/**
 * Reads the text of every page in a bounded child process. Throws PermanentFailure for documents
 * that cannot be read (ENCRYPTED, NOT_PDF, TOO_MANY_PAGES, NO_TEXT_LAYER) or that exceed a
 * limit (TOO_COMPLEX); RetryableFailure when the child could not be started or failed for a
 * reason of its own; whatever onPage throws.
 */
export async function extractTextBounded(
  data: Uint8Array,
  options: BoundedExtractOptions,
): Promise<BoundedExtractResult> {
  const script = await childScript();
  const { limits } = options;
  const child = fork(script, [], {
    execArgv: [`--max-old-space-size=${limits.heapMb}`],
    env: childEnv(),
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => (stderr = (stderr + b.toString('utf8')).slice(-STDERR_TAIL)));

  return new Promise<BoundedExtractResult>((resolvePromise, reject) => {
    let settled = false;
    let answered = false;
    let peakKb = 0;
    let pageTimer: NodeJS.Timeout | undefined;
    let pages: Promise<void> = Promise.resolve();

    const finish = (err: unknown, result?: ExtractResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(documentTimer);
      clearTimeout(pageTimer);
      clearInterval(watch);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      options.onStats?.({ ...(peakKb && { childPeakRssMb: Math.round(peakKb / 1024) }) });
      if (err) reject(err);
      else resolvePromise({ ...result!, ...(peakKb && { childPeakRssMb: Math.round(peakKb / 1024) }) });
    };
    const stop = (what: string) => {
      if (settled || answered) return;
      child.kill('SIGKILL');
      finish(tooComplex(what));
    };

    const documentTimer = setTimeout(
      () => stop(`reading it took longer than ${limits.documentMs} ms`),
      limits.documentMs,
    );
    const armPageTimer = () => {
      clearTimeout(pageTimer);
      pageTimer = setTimeout(() => stop(`reading one page took longer than ${limits.pageMs} ms`), limits.pageMs);
    };
    const watch = setInterval(() => {
      if (!child.pid) return;
      void residentKb(child.pid).then((kb) => {
        if (!kb) return;
        peakKb = Math.max(peakKb, kb.peak || kb.rss);
        if (kb.rss > limits.rssMb * 1024) stop(`reading it needed more than ${limits.rssMb} MB of memory`);
      });
    }, WATCH_INTERVAL_MS);

    child.on('message', (m: ChildMessage) => {
      if (settled) return;
      switch (m.type) {
        case 'ready':
          armPageTimer();
          pages = pages.then(() => options.onDocument?.(m.pages));
          pages.catch(finish);
          break;
        case 'page':
          armPageTimer();
          pages = pages.then(() => options.onPage(m.page, m.text, m.verdict));
          pages.catch(finish);
          break;
        case 'done':
          answered = true;
          clearTimeout(pageTimer);
          pages.then(() => finish(undefined, m.result), finish);
          break;
        case 'failed':
          answered = true;
          finish(new PermanentFailure(m.reason, m.message));
          break;
        case 'error':
          answered = true;
          finish(
            new RetryableFailure('PROCESSING_FAILED', 'Extracting the text failed', { cause: new Error(m.message) }),
          );
          break;
      }
    });
    child.on('error', (err) => {
      if (!answered)
        finish(new RetryableFailure('PROCESSING_FAILED', 'The text extraction could not be started', { cause: err }));
    });
    child.on('exit', (code, signal) => {
      if (settled || answered) return;
      // Out of heap, a V8 fatal error, killed by the system: the document took the reader down.
      logger.warn('the extraction child stopped without an answer', { code, signal, stderr: stderr.slice(-512) });
      finish(tooComplex('reading it exhausted the reader (out of memory or a fatal error)'));
    });

    const job: ChildJob = { data, maxPages: options.maxPages, content: limits.content };
    child.send(job, (err) => {
      if (err && !answered)
        finish(new RetryableFailure('PROCESSING_FAILED', 'The text extraction could not be started', { cause: err }));
    });
  });
}
