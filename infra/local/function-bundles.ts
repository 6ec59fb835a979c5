import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';
import { buildFunctions, projectRoot } from '../build.ts';
import type { FunctionSpec } from './invoker.ts';

// The local runtime runs each function from the bundle `npm run build` makes for Lambda (same
// esbuild settings, minified, with a source map), so what runs locally is what is deployed, and
// an instance starts in a fraction of the time the TypeScript loader would take (each cold
// start would otherwise resolve hundreds of modules through its hooks). Bundles are cached in
// node_modules/.cache/local-functions and rebuilt when any file they were built from changes
// (size or modification time), or the build itself does.

const BUNDLE_CACHE_DIR = join(projectRoot, 'node_modules/.cache/local-functions');
const BUILD_INPUTS = [
  'infra/build.ts',
  'infra/build/esbuild-plugins.ts',
  'infra/build/measure.ts',
  'infra/build/ocr-packages.ts',
  'infra/project-paths.ts',
  'package-lock.json',
];

interface Stamp {
  /** index.mjs of the bundle. */
  file: string;
  /** Path → [size, mtimeMs] of every input when it was built. */
  inputs: Record<string, [number, number]>;
}

async function fingerprint(paths: string[]): Promise<Record<string, [number, number]> | undefined> {
  const out: Record<string, [number, number]> = {};
  try {
    await Promise.all(
      paths.map(async (p) => {
        const s = await stat(join(projectRoot, p));
        out[p] = [s.size, s.mtimeMs];
      }),
    );
  } catch {
    return undefined; // an input is gone: rebuild
  }
  return out;
}

const fileInputs = (inputs: string[]) => [...BUILD_INPUTS, ...inputs.filter((p) => !/^[\w-]+:/.test(p))];
const sameStamp = (a: Record<string, [number, number]>, b: Record<string, [number, number]>) =>
  Object.keys(a).length === Object.keys(b).length &&
  Object.entries(a).every(([k, [size, mtime]]) => b[k]?.[0] === size && b[k]?.[1] === mtime);

const nameOf = (entry: string) => entry.replace(/\.ts$/, '').replace(/[^\w-]+/g, '-');
const stampFileOf = (entry: string) =>
  join(BUNDLE_CACHE_DIR, `${nameOf(entry)}-${createHash('sha256').update(entry).digest('hex').slice(0, 8)}.json`);

/** The cached bundle of an entry, if every file it was built from is unchanged. */
async function cached(entry: string): Promise<string | undefined> {
  const old = await readFile(stampFileOf(entry), 'utf8').then(
    (t) => JSON.parse(t) as Stamp,
    () => undefined,
  );
  if (!old) return undefined;
  const now = await fingerprint(Object.keys(old.inputs));
  return now && sameStamp(old.inputs, now) && (await stat(old.file).catch(() => undefined)) ? old.file : undefined;
}

/** Builds entries in one esbuild run (each still its own bundle) and records what each was built from. */
async function buildAll(entries: string[]): Promise<Map<string, string>> {
  // A directory of its own per build: another process may be running the previous bundles.
  const outDir = join(BUNDLE_CACHE_DIR, `build-${Date.now()}-${randomBytes(3).toString('hex')}`);
  const before = await fingerprint(BUILD_INPUTS);
  const built = await buildFunctions({
    outDir,
    functions: entries.map((entry) => ({
      name: nameOf(entry),
      entry,
      kind: 'http',
      timeoutSeconds: 1,
      memoryMb: 128,
      access: {},
    })),
  });
  const files = new Map<string, string>();
  await Promise.all(
    entries.map(async (entry, i) => {
      const file = join(built[i]!.dir, 'index.mjs');
      files.set(entry, file);
      const inputs = await fingerprint(fileInputs(built[i]!.inputs));
      // Files that changed while esbuild read them leave no stamp: the next start builds again.
      if (
        !inputs ||
        !before ||
        !BUILD_INPUTS.every((p) => inputs[p]?.[0] === before[p]![0] && inputs[p]?.[1] === before[p]![1])
      )
        return;
      const stampFile = stampFileOf(entry);
      const old = await readFile(stampFile, 'utf8').then(
        (t) => JSON.parse(t) as Stamp,
        () => undefined,
      );
      const tmp = `${stampFile}.${randomBytes(4).toString('hex')}`;
      await writeFile(tmp, JSON.stringify({ file, inputs } satisfies Stamp));
      await rename(tmp, stampFile);
      if (old && old.file !== file) void removeStale(old.file);
    }),
  );
  return files;
}

/** Removes an earlier build of a function an hour after it was made (any instance running it has long loaded it). */
async function removeStale(file: string) {
  const dir = dirname(file);
  const built = await stat(dir).catch(() => undefined);
  if (!built || Date.now() - built.mtimeMs < 3_600_000) return;
  await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  await rmdir(dirname(dir)).catch(() => undefined); // the build's directory, once it holds no other bundle
}

const bundles = new Map<string, Promise<string>>();

/**
 * Makes sure the bundles of these entries exist (one esbuild run for the missing or stale
 * ones); the test suite's global setup builds every function once this way.
 */
export function prebuildBundles(entries: string[]): Promise<unknown> {
  const todo = [...new Set(entries)].filter((e) => !bundles.has(e));
  const checked = mkdir(BUNDLE_CACHE_DIR, { recursive: true }).then(() =>
    Promise.all(todo.map(async (e) => [e, await cached(e)] as const)),
  );
  const built = checked.then((found) => {
    const stale = found.filter(([, file]) => !file).map(([e]) => e);
    return stale.length ? buildAll(stale) : new Map<string, string>();
  });
  for (const entry of todo) {
    const bundle = Promise.all([checked, built]).then(
      ([found, fresh]) => found.find(([e]) => e === entry)![1] ?? fresh.get(entry)!,
    );
    bundles.set(entry, bundle);
    bundle.catch(() => bundles.delete(entry));
  }
  return Promise.all(todo.map((e) => bundles.get(e)));
}

/** The path of the function's bundle (index.mjs), built at most once per process and change. */
export function functionBundle(fn: Pick<FunctionSpec, 'entry'>): Promise<string> {
  if (!bundles.has(fn.entry)) void prebuildBundles([fn.entry]).catch(() => undefined);
  return bundles.get(fn.entry)!;
}

let host: Promise<string> | undefined;

/** The instance's own program (function-host.ts), bundled once per process into the cache. */
export function functionHostBundle(): Promise<string> {
  host ??= (async () => {
    const out = await build({
      entryPoints: [join(projectRoot, 'infra/local/function-host.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node24',
      write: false,
      logLevel: 'silent',
    });
    const code = out.outputFiles[0]!.contents;
    await mkdir(BUNDLE_CACHE_DIR, { recursive: true });
    const file = join(BUNDLE_CACHE_DIR, `host-${createHash('sha256').update(code).digest('hex').slice(0, 12)}.mjs`);
    if (!(await stat(file).catch(() => undefined))) {
      const tmp = `${file}.${randomBytes(4).toString('hex')}`;
      await writeFile(tmp, code);
      await rename(tmp, file);
    }
    return file;
  })();
  host.catch(() => (host = undefined));
  return host;
}
