import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { projectRoot } from '../../infra/local/runtime.ts';
import type { BenchOutput } from './report.ts';
import type { BenchService } from './service.ts';

// What the runner gives each benchmark: the shared service (started on first use, stopped at
// the end), a scratch directory and a progress line writer.

export interface BenchContext {
  /** The service under test, shared by every benchmark of the run. */
  service(): Promise<BenchService>;
  /** Scratch space of this run (bundles, generated PDFs); removed at the end. */
  tmpDir: string;
  /** A progress line on stderr (the tables go to stdout). */
  log(line: string): void;
}

export interface Benchmark {
  name: string;
  title: string;
  /** What the benchmark still waits for (another engineer's file), or undefined when it can run. */
  requires?(): Promise<string | undefined>;
  run(ctx: BenchContext): Promise<BenchOutput>;
}

const exists = (path: string) =>
  access(join(projectRoot, path)).then(
    () => true,
    () => false,
  );

/** "waiting for a, b" when some of these project files do not exist yet. */
export async function missingFiles(...paths: string[]): Promise<string | undefined> {
  const missing: string[] = [];
  for (const p of paths) if (!(await exists(p))) missing.push(p);
  return missing.length ? `waiting for ${missing.join(', ')}` : undefined;
}
