import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { buildFunctions, projectRoot } from '../build.ts';
import type { FunctionSpec } from './invoker.ts';

// The local runtime runs each function from the bundle `npm run build` makes for Lambda (same
// esbuild settings, minified, with a source map), so what runs locally is what is deployed, and
// an instance starts in a fraction of the time the TypeScript loader would take (each cold
// start would otherwise resolve hundreds of modules through its hooks). Bundles are cached in
// node_modules/.cache/local-functions and rebuilt when any file they were built from changes
// (size or modification time), or the build itself does.

export const BUNDLE_CACHE_DIR = join(projectRoot, 'node_modules/.cache/local-functions');
const BUILD_INPUTS = ['infra/build.ts', 'package-lock.json'];

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
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([k, [size, mtime]]) => b[k]?.[0] === size && b[k]?.[1] === mtime);

async function cachedOrBuilt(fn: FunctionSpec): Promise<string> {
  const key = `${fn.name}-${createHash('sha256').update(fn.entry).digest('hex').slice(0, 8)}`;
  const stampFile = join(BUNDLE_CACHE_DIR, `${key}.json`);
  const old = await readFile(stampFile, 'utf8').then((t) => JSON.parse(t) as Stamp, () => undefined);
  if (old) {
    const now = await fingerprint(Object.keys(old.inputs));
    if (now && sameStamp(old.inputs, now) && (await stat(old.file).catch(() => undefined))) return old.file;
  }
  // A directory of its own per build: another process may be running the previous bundle.
  const outDir = join(BUNDLE_CACHE_DIR, `${key}-${Date.now()}-${randomBytes(3).toString('hex')}`);
  const before = await fingerprint(BUILD_INPUTS);
  const [built] = await buildFunctions({ outDir, functions: [{ ...fn, kind: 'http', access: {} }] });
  const inputs = await fingerprint(fileInputs(built!.inputs));
  const file = join(built!.dir, 'index.mjs');
  // Files that changed while esbuild read them leave no stamp: the next start builds again.
  if (inputs && before && sameStamp(before, Object.fromEntries(BUILD_INPUTS.map((p) => [p, inputs[p]!])))) {
    const tmp = `${stampFile}.${randomBytes(4).toString('hex')}`;
    await writeFile(tmp, JSON.stringify({ file, inputs } satisfies Stamp));
    await rename(tmp, stampFile);
    if (old) void removeStale(old.file);
  }
  return file;
}

/** Removes an earlier build of a function an hour after it was replaced (long enough for any instance running it to have loaded it). */
async function removeStale(file: string) {
  const dir = join(file, '../..');
  const built = await stat(dir).catch(() => undefined);
  if (built && Date.now() - built.mtimeMs > 3_600_000) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

const bundles = new Map<string, Promise<string>>();

/** The path of the function's bundle (index.mjs), built at most once per process and change. */
export function functionBundle(fn: FunctionSpec): Promise<string> {
  const key = `${fn.name}\0${fn.entry}`;
  let bundle = bundles.get(key);
  if (!bundle) {
    bundle = mkdir(BUNDLE_CACHE_DIR, { recursive: true }).then(() => cachedOrBuilt(fn));
    bundles.set(key, bundle);
    bundle.catch(() => bundles.delete(key));
  }
  return bundle;
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
      target: 'node20',
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
