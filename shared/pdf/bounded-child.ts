import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { logger } from '../observability/logger.ts';
import type { ChildJob, ChildMessage, ChildRequest } from './extract-child.ts';
import { PermanentFailure, RetryableFailure } from '../files/failures.ts';
import { pdfjsWorkerPatch } from './pdfjs-worker-patch.ts';

// pdf.js with a bound on what one document may cost (docs/DECISIONS.md, Hostile documents; OCR
// bounds). pdf.js runs in a child process, never in the function's own: a document can exhaust
// the heap of whatever process reads or draws it, or trip a V8 fatal error that no try/catch sees
// (a ToUnicode CMap with a few ranges of 2^24 codes does), and a worker thread would take the
// whole process down with it. The child gets a heap cap (--max-old-space-size) below the
// function's memory; the parent watches its resident size (heap plus the buffers pdf.js inflates
// and the canvases it draws on, outside it) and its time per page and per document, and kills it
// past any limit. Every way the child can end without an answer — killed for a limit, out of
// memory, a fatal error — is the typed failure TOO_COMPLEX, recorded by this (surviving) process.
// Text extraction (bounded-extract.ts) and drawing pages (ocr/bounded-render.ts) both run here.
//
// The child is `extract-child.mjs` beside the bundle (infra/build.ts ships it with every function
// that imports this module); from sources (tests, npm start) it is bundled on first use into
// node_modules/.cache with esbuild, dependencies left external, so pdf.js loads as plain Node
// modules in the child.

export interface ChildLimits {
  /** Old-space heap of the child (MB). */
  heapMb: number;
  /** The child is killed when its resident size exceeds this (MB). */
  rssMb: number;
  /** Longest one page may take once the document is open (ms). */
  pageMs: number;
  /** Longest the whole document may take, opening included (ms). */
  documentMs: number;
}

/** What the child does, in the words of its failures ("reading one page took longer than …"). */
interface ChildTask {
  verb: 'reading' | 'drawing';
  /** What a breach calls the document ("The PDF is too complex …"; default: the PDF). */
  noun?: string;
  /** "the text extraction": "… could not be started". */
  name: string;
}

/** The parent's side of a running child, for the handler of its messages. */
export interface ChildSession<T> {
  /** Starts (again) the clock of one page. */
  armPageTimer(): void;
  /** Stops the clock of the page (the parent is busy with a page's result, not the child). */
  clearPageTimer(): void;
  /** Sends the child a request (drawing: the next page). */
  request(message: ChildRequest): void;
  /** The child has answered for good: its exit and the clocks no longer matter (finish comes later). */
  answered(): void;
  /** Ends the run: with `err`, or with `result`. */
  finish(err: unknown, result?: T): void;
}

interface BoundedChildOptions<T> {
  limits: ChildLimits;
  task: ChildTask;
  /** Every message but `failed` and `error` (handled here: PermanentFailure and RetryableFailure). */
  onMessage: (message: ChildMessage, session: ChildSession<T>) => void;
  /** Called once the child is gone, with its peak resident size (for the benchmark). */
  onStats?: (stats: { childPeakRssMb?: number }) => void;
}

const WATCH_INTERVAL_MS = 50;
const STDERR_TAIL = 2048;

export const tooComplex = (what: string, noun = 'PDF') =>
  new PermanentFailure('TOO_COMPLEX', `The ${noun} is too complex to process: ${what}`);

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
    plugins: [pdfjsWorkerPatch],
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

/**
 * The child waiting for the next document, with pdf.js already loaded (the child loads it as soon
 * as it starts): forking and loading pdf.js, and warming its code up, cost more than reading a
 * 300-page document, so an instance keeps one child (docs/DECISIONS.md, A warm extraction child).
 * A child that read a document's text without a breach, stayed small and has read fewer than
 * MAX_DOCUMENTS_PER_CHILD goes on to the next; any other is killed and a new one forked at once.
 * Unreferenced while it waits, so it never keeps this process alive; it exits when this process
 * does (the IPC channel closes).
 */
let spare: { child: ChildProcess; heapMb: number; documents: number; onExit: () => void } | undefined;

/** Documents one child reads before it is replaced (bounds what one child may accumulate). */
const MAX_DOCUMENTS_PER_CHILD = 20;
/**
 * Share of the resident-size limit a child may hold after a document and still read the next.
 * What it holds then is mostly heap pages V8 keeps committed for reuse, which the next document
 * fills before asking for more: a reused child's peak is its resting size, not that plus the
 * document's (docs/DECISIONS.md, A warm extraction child).
 */
const REUSE_RSS_SHARE = 0.4;

/**
 * Whether a child that read `documents` documents (this one included) without a breach, and holds
 * `residentKb` now, reads the next document.
 */
export function mayReadNext(residentKb: number, limits: Pick<ChildLimits, 'rssMb'>, documents: number): boolean {
  return residentKb <= limits.rssMb * 1024 * REUSE_RSS_SHARE && documents < MAX_DOCUMENTS_PER_CHILD;
}

function forkChild(script: string, heapMb: number): ChildProcess {
  return fork(script, [], {
    execArgv: [`--max-old-space-size=${heapMb}`],
    env: childEnv(),
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
  });
}

/** Whether the child's handles keep this process alive (a waiting spare's do not). */
function holdOpen(child: ChildProcess, held: boolean): void {
  const handles = [child, child.channel, child.stderr] as ({ ref(): unknown; unref(): unknown } | null | undefined)[];
  for (const handle of handles) {
    if (held) handle?.ref?.();
    else handle?.unref?.();
  }
}

const alive = (child: ChildProcess) => child.connected && child.exitCode === null && child.signalCode === null;

/** The waiting child when it is alive and has the heap asked for; a new one otherwise. */
function takeChild(script: string, heapMb: number): { child: ChildProcess; documents: number } {
  const waiting = spare;
  spare = undefined;
  if (waiting) {
    const { child } = waiting;
    if (waiting.heapMb === heapMb && alive(child)) {
      child.off('exit', waiting.onExit);
      holdOpen(child, true);
      if (waiting.documents > 0) resetPeakResident(child.pid);
      return { child, documents: waiting.documents };
    }
    child.kill('SIGKILL');
  }
  return { child: forkChild(script, heapMb), documents: 0 };
}

/** Keeps `child` (or, without one, a new child forked now) waiting for the next document. */
function keepWaiting(script: string, heapMb: number, reused?: { child: ChildProcess; documents: number }): void {
  if (spare) {
    reused?.child.kill('SIGKILL');
    return;
  }
  try {
    const child = reused?.child ?? forkChild(script, heapMb);
    // An error while it waits (not started, the channel gone): the next run forks its own.
    if (!child.listenerCount('error')) child.on('error', () => undefined);
    const onExit = () => {
      if (spare?.child === child) spare = undefined;
    };
    child.on('exit', onExit);
    holdOpen(child, false);
    spare = { child, heapMb, documents: reused?.documents ?? 0, onExit };
  } catch {
    // could not fork: the next run forks its own (and reports it if that fails too)
  }
}

/** Resident size now (kB), read synchronously (Linux only). */
function residentNowKb(pid: number | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/^VmRSS:\s*(\d+)/m.exec(status)?.[1] ?? NaN) || undefined;
  } catch {
    return undefined;
  }
}

/** Starts the child's peak resident size (VmHWM) again from its current size, so that each document reports its own. */
function resetPeakResident(pid: number | undefined): void {
  try {
    if (pid) writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // not Linux, or not allowed: the peak reported is the child's since it started
  }
}

/**
 * The environment of the child: the parent's, without loaders it does not need (tsx, jest), and
 * with V8's compile cache on (in the instance's temporary directory): every child after the first
 * loads pdf.js from the cache instead of compiling it again.
 */
function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  env.NODE_COMPILE_CACHE ??= join(tmpdir(), 'extract-child-compile-cache');
  const options = (env.NODE_OPTIONS ?? '').split(/\s+/).filter((o) => o === '--enable-source-maps');
  if (options.length) env.NODE_OPTIONS = options.join(' ');
  else delete env.NODE_OPTIONS;
  return env;
}

/**
 * Runs one job in a bounded child process. Rejects with PermanentFailure when the child reports
 * one or exceeds a limit (TOO_COMPLEX); RetryableFailure when it could not be started or failed
 * for a reason of its own; whatever `onMessage` finishes with.
 */
export async function runBoundedChild<T>(job: ChildJob, options: BoundedChildOptions<T>): Promise<T> {
  const script = await childScript();
  const { limits, task } = options;
  const taken = takeChild(script, limits.heapMb);
  const { child } = taken;
  let stderr = '';
  const onStderr = (b: Buffer) => (stderr = (stderr + b.toString('utf8')).slice(-STDERR_TAIL));
  child.stderr?.on('data', onStderr);
  const notStarted = (cause: unknown) =>
    new RetryableFailure('PROCESSING_FAILED', `${capitalised(task.name)} could not be started`, { cause });

  return new Promise<T>((resolvePromise, reject) => {
    let settled = false;
    let answered = false;
    let peakKb = 0;
    let pageTimer: NodeJS.Timeout | undefined;

    const finish = (err: unknown, result?: T) => {
      if (settled) return;
      settled = true;
      clearTimeout(documentTimer);
      clearTimeout(pageTimer);
      clearInterval(watch);
      child.off('message', onMessage);
      child.off('error', onError);
      child.off('exit', onExit);
      child.stderr?.off('data', onStderr);
      // Text read without a breach, by a child still small: it reads the next document too.
      const rss = !err && job.kind === 'extract' && alive(child) ? residentNowKb(child.pid) : undefined;
      const reusable = rss !== undefined && mayReadNext(rss, limits, taken.documents + 1);
      if (reusable) keepWaiting(script, limits.heapMb, { child, documents: taken.documents + 1 });
      else {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        keepWaiting(script, limits.heapMb);
      }
      const stats = peakKb ? { childPeakRssMb: Math.round(peakKb / 1024) } : {};
      options.onStats?.(stats);
      if (err) reject(err);
      else resolvePromise(result as T);
    };
    const stop = (what: string) => {
      if (settled || answered) return;
      child.kill('SIGKILL');
      finish(tooComplex(what, task.noun));
    };
    const session: ChildSession<T> = {
      armPageTimer: () => {
        clearTimeout(pageTimer);
        pageTimer = setTimeout(() => stop(`${task.verb} one page took longer than ${limits.pageMs} ms`), limits.pageMs);
      },
      clearPageTimer: () => clearTimeout(pageTimer),
      answered: () => {
        answered = true;
        clearTimeout(pageTimer);
      },
      request: (message) => {
        if (settled) return;
        child.send(message, (err) => {
          if (err) finish(notStarted(err));
        });
      },
      finish,
    };

    const documentTimer = setTimeout(
      () => stop(`${task.verb} it took longer than ${limits.documentMs} ms`),
      limits.documentMs,
    );
    const watch = setInterval(() => {
      if (!child.pid) return;
      void residentKb(child.pid).then((kb) => {
        if (!kb) return;
        peakKb = Math.max(peakKb, kb.peak || kb.rss);
        if (kb.rss > limits.rssMb * 1024) stop(`${task.verb} it needed more than ${limits.rssMb} MB of memory`);
      });
    }, WATCH_INTERVAL_MS);

    const onMessage = (m: ChildMessage) => {
      if (settled) return;
      if (m.type === 'failed' || m.type === 'error') answered = true;
      if (m.type === 'failed') finish(new PermanentFailure(m.reason, m.message));
      else if (m.type === 'error')
        finish(
          new RetryableFailure('PROCESSING_FAILED', `${capitalised(task.name)} failed`, {
            cause: new Error(m.message),
          }),
        );
      else options.onMessage(m, session);
    };
    const onError = (err: Error) => {
      if (!answered) finish(notStarted(err));
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      if (settled || answered) return;
      // Out of heap, a V8 fatal error, killed by the system: the document took the child down.
      logger.warn(`the ${task.verb} child stopped without an answer`, { code, signal, stderr: stderr.slice(-512) });
      finish(tooComplex(`${task.verb} it exhausted the reader (out of memory or a fatal error)`, task.noun));
    };
    child.on('message', onMessage);
    child.on('error', onError);
    child.on('exit', onExit);

    child.send(job, (err) => {
      if (err && !answered) finish(notStarted(err));
    });
  });
}

const capitalised = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
