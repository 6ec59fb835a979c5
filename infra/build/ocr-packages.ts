import { execFileSync } from 'node:child_process';
import { access, cp, mkdir, readFile, readdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { projectRoot } from '../project-paths.ts';

// OCR (functions that import these, pdf-ocr): tesseract.js runs its WASM core in worker threads
// that load files by path, and @napi-rs/canvas is a native addon, so neither can be bundled. They
// stay external and are copied with their dependencies into <function>/node_modules; tesseract's
// core only in its LSTM builds, the trained data only in the model the engine uses, and the
// canvas addon for the Lambda platform (linux-arm64-gnu), taken from the npm registry with
// `npm pack` at build time when it is not installed (cached in node_modules/.cache).
export const OCR_EXTERNALS = ['tesseract.js', '@napi-rs/canvas'];
export const LAMBDA_CANVAS_BINARY = '@napi-rs/canvas-linux-arm64-gnu';
const OCR_LANGUAGE_PACKAGES = (process.env.OCR_LANGUAGES ?? 'eng').split('+').map((l) => `@tesseract.js-data/${l}`);

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** Copies a package and, recursively, its dependencies into <dir>/node_modules; their names. */
async function copyPackageTree(
  dir: string,
  name: string,
  from: string,
  done: Set<string>,
  filter?: (path: string) => boolean,
): Promise<void> {
  if (done.has(name)) return;
  const pkgJson = createRequire(join(from, 'noop.js')).resolve(`${name}/package.json`);
  const src = dirname(pkgJson);
  done.add(name);
  await cp(src, join(dir, 'node_modules', name), {
    recursive: true,
    filter: (path) =>
      !/(^|[\\/])(test|tests|docs|examples|\.github)([\\/]|$)/.test(relative(src, path)) &&
      (filter?.(relative(src, path)) ?? true),
  });
  const pkg = JSON.parse(await readFile(pkgJson, 'utf8')) as { dependencies?: Record<string, string> };
  for (const dep of Object.keys(pkg.dependencies ?? {})) {
    if (dep === 'opencollective-postinstall') continue; // an install-time banner
    await copyPackageTree(dir, dep, src, done, undefined);
  }
}

/** A canvas addon package (e.g. the arm64 Lambda one): installed, or unpacked from `npm pack` into node_modules/.cache. */
async function canvasBinary(name: string, version: string): Promise<string> {
  try {
    const installed = dirname(createRequire(join(projectRoot, 'noop.js')).resolve(`${name}/package.json`));
    const pkg = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as { version: string };
    if (pkg.version === version) return installed;
  } catch {
    // not installed on this (x64) machine: fetch it below
  }
  const cache = join(projectRoot, 'node_modules/.cache/lambda-natives', `${name.replace('/', '+')}-${version}`);
  if (!(await exists(join(cache, 'package/package.json')))) {
    await mkdir(cache, { recursive: true });
    const out = execFileSync('npm', ['pack', `${name}@${version}`, '--pack-destination', cache, '--silent'], {
      encoding: 'utf8',
    }).trim();
    execFileSync('tar', ['-xzf', join(cache, out.split('\n').at(-1)!), '-C', cache]);
  }
  return join(cache, 'package');
}

/** tesseract.js, its WASM core (LSTM builds), trained data and @napi-rs/canvas (+ the arm64 addon) into <dir>/node_modules. */
export async function copyOcrPackages(dir: string, canvasBinaries: string[]): Promise<string[]> {
  const done = new Set<string>();
  await copyPackageTree(dir, 'tesseract.js', projectRoot, done);
  // Only the cores Node loads: tesseract.js 7's Node worker hands getCore a boolean where it
  // expects an OEM, so it always picks the combined (legacy + LSTM) builds; the -lstm ones are
  // never loaded there (test/infra/ocr-bundle.test.ts proves the asset works without them).
  await rm(join(dir, 'node_modules/tesseract.js-core'), { recursive: true, force: true });
  done.delete('tesseract.js-core');
  await copyPackageTree(
    dir,
    'tesseract.js-core',
    join(projectRoot, 'node_modules/tesseract.js'),
    done,
    (p) => !/-lstm\.(js|wasm|wasm\.js)$/.test(p),
  );
  for (const lang of OCR_LANGUAGE_PACKAGES)
    await copyPackageTree(
      dir,
      lang,
      projectRoot,
      done,
      (p) => !p.startsWith('4.0.0') || p.startsWith('4.0.0_best_int'),
    );
  await copyPackageTree(dir, '@napi-rs/canvas', projectRoot, done);
  const canvasVersion = (
    JSON.parse(await readFile(join(dir, 'node_modules/@napi-rs/canvas/package.json'), 'utf8')) as { version: string }
  ).version;
  // Only the addons asked for: the one the x64 build machine installed is no use in arm64 Lambda.
  for (const entry of await readdir(join(dir, 'node_modules/@napi-rs'))) {
    if (entry.startsWith('canvas-'))
      await rm(join(dir, 'node_modules/@napi-rs', entry), { recursive: true, force: true });
  }
  for (const name of canvasBinaries) {
    await cp(await canvasBinary(name, canvasVersion), join(dir, 'node_modules', name), { recursive: true });
    done.add(name);
  }
  return [...done].sort();
}
