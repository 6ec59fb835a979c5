import { readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Metafile } from 'esbuild';
import { projectRoot } from '../project-paths.ts';

// Reading esbuild's metafile for infra/build.ts: which outputs are a function's code, which of
// them a cold start reads, and what takes most room.

type Output = Metafile['outputs'][string];

/** Lazily loaded parts of a bundle, beside its index.mjs (see buildFunctions). */
export const CHUNKS_DIR = 'chunks';

/** The metafile entry of one output (`<name>/<base>.mjs`). */
export function outputOf(metafile: Metafile, outDir: string, name: string, base: string): Output {
  const outKey = relative(projectRoot, join(outDir, name, `${base}.mjs`))
    .split(sep)
    .join('/');
  const output = metafile.outputs[outKey];
  if (!output) throw new Error(`esbuild wrote no ${outKey}`);
  return output;
}

export async function dirSize(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}

/** The packages (or "project sources") taking most of a bundle, for finding what made it big. */
export function largestInputs(outputs: Output[]) {
  const byPackage = new Map<string, number>();
  for (const [path, { bytesInOutput }] of outputs.flatMap((o) => Object.entries(o.inputs))) {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? '(project sources)';
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + bytesInOutput);
  }
  return [...byPackage]
    .map(([path, bytes]) => ({ path, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, 6);
}

export function mergeMetafiles(metafiles: Metafile[]): Metafile {
  return {
    inputs: Object.assign({}, ...metafiles.map((m) => m.inputs)) as Metafile['inputs'],
    outputs: Object.assign({}, ...metafiles.map((m) => m.outputs)) as Metafile['outputs'],
  };
}

/** The metafile entries of a function's chunks (outputs under <name>/chunks/ that are code). */
export function chunksOf(metafile: Metafile, outDir: string, name: string): Output[] {
  const prefix = `${relative(projectRoot, join(outDir, name, CHUNKS_DIR))
    .split(sep)
    .join('/')}/`;
  return Object.entries(metafile.outputs)
    .filter(([key]) => key.startsWith(prefix) && key.endsWith('.mjs'))
    .map(([, output]) => output);
}

/** index.mjs and every chunk it imports statically, transitively: what loading the function reads. */
export function loadedAtStart(metafile: Metafile, index: Output): Set<Output> {
  const seen = new Set([index]);
  const todo = [index];
  for (let output = todo.pop(); output; output = todo.pop()) {
    for (const i of output.imports) {
      const chunk = i.kind === 'import-statement' && !i.external ? metafile.outputs[i.path] : undefined;
      if (chunk && !seen.has(chunk)) {
        seen.add(chunk);
        todo.push(chunk);
      }
    }
  }
  return seen;
}
