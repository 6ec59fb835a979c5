import { execFileSync } from 'node:child_process';
import { access, cp, mkdir, readFile, rm, stat, readdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Metafile, type Plugin } from 'esbuild';
import { manifestFunctions, type ManifestFunction } from './routes.ts';
import { asError } from '#shared/errors.ts';
import { pdfjsWorkerPatch } from '#shared/pdf/pdfjs-worker-patch.ts';

// `npm run build`: one minified ESM bundle per manifest function (HTTP routes and pipeline
// stages) in dist/<name>/index.mjs, with a linked source map. The AWS SDK is bundled rather
// than taken from the Lambda runtime, so what we test is what runs. Functions that read PDFs get
// the pdf.js child (extract-child.mjs, with pdfjs-dist) and pdfjs's standard_fonts/, cmaps/ and
// wasm/ directories beside the bundle.

export const projectRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');
export const DEFAULT_OUT_DIR = join(projectRoot, 'dist');

/** Size budgets for what a cold start reads, index.mjs and its static chunks (decimal MB): small API bundles keep cold starts short. */
const BUNDLE_BUDGET_BYTES: Record<string, number> = {
  'pdf-extract': 4_000_000,
  // The MCP SDK's server brings its JSON-RPC types and ajv (the tools' schema validation): about 1.06 MB.
  mcp: 1_300_000,
};
export const HTTP_BUNDLE_BUDGET_BYTES = 1_000_000;
const QUEUE_BUNDLE_BUDGET_BYTES = 4_000_000;
const budgetOf = (fn: Pick<ManifestFunction, 'name' | 'kind'>) =>
  BUNDLE_BUDGET_BYTES[fn.name] ?? (fn.kind === 'http' ? HTTP_BUNDLE_BUDGET_BYTES : QUEUE_BUNDLE_BUDGET_BYTES);

/** The bounded pdf.js child (shared/pdf/bounded-child.ts: extraction, drawing) forks `<EXTRACT_CHILD>.mjs` beside the bundle. */
const BOUNDED_CHILD = 'shared/pdf/bounded-child.ts';
export const EXTRACT_CHILD = 'extract-child';
const EXTRACT_CHILD_SOURCE = 'shared/pdf/extract-child.ts';

type BuildOptionsOfEsbuild = Parameters<typeof build>[0];

/** The metafile entry of one output (`<name>/<base>.mjs`). */
function outputOf(metafile: Metafile, outDir: string, name: string, base: string): Metafile['outputs'][string] {
  const outKey = relative(projectRoot, join(outDir, name, `${base}.mjs`))
    .split(sep)
    .join('/');
  const output = metafile.outputs[outKey];
  if (!output) throw new Error(`esbuild wrote no ${outKey}`);
  return output;
}

/** Where the bundle of a function that uses pdfjs finds the standard fonts (see shared/pdf). */
export const STANDARD_FONTS_DIR = 'standard_fonts';
const PDFJS_STANDARD_FONTS = join(projectRoot, 'node_modules/pdfjs-dist/standard_fonts');
/** pdf.js's packed CMaps (CJK fonts with predefined CMaps), beside the bundle too. */
export const CMAPS_DIR = 'cmaps';
const PDFJS_CMAPS = join(projectRoot, 'node_modules/pdfjs-dist/cmaps');
/** pdf.js's WebAssembly image decoders (JBIG2 and CCITT fax, JPX, ICC colours), beside the bundle too. */
export const WASM_DIR = 'wasm';
const PDFJS_WASM = join(projectRoot, 'node_modules/pdfjs-dist/wasm');

// OCR (functions that import these, pdf-ocr): tesseract.js runs its WASM core in worker threads
// that load files by path, and @napi-rs/canvas is a native addon, so neither can be bundled. They
// stay external and are copied with their dependencies into <function>/node_modules; tesseract's
// core only in its LSTM builds, the trained data only in the model the engine uses, and the
// canvas addon for the Lambda platform (linux-arm64-gnu), taken from the npm registry with
// `npm pack` at build time when it is not installed (cached in node_modules/.cache).
const OCR_EXTERNALS = ['tesseract.js', '@napi-rs/canvas'];
export const LAMBDA_CANVAS_BINARY = '@napi-rs/canvas-linux-arm64-gnu';
const OCR_LANGUAGE_PACKAGES = (process.env.OCR_LANGUAGES ?? 'eng').split('+').map((l) => `@tesseract.js-data/${l}`);

// ESM output with CommonJS dependencies inside: give them `require` (Node built-ins mostly).
const BANNER = [
  "import { createRequire as __bundleCreateRequire } from 'node:module';",
  'const require = __bundleCreateRequire(import.meta.url);',
].join('\n');

// zod 4 (classic and mini) re-exports every locale through the `z` namespace, which esbuild cannot tree-shake
// once `z` is imported as an object: ~300 KB of error messages in 60 languages per bundle.
// We only ever use English (shared/zod.ts configures it for zod/mini), so the bundles get just that one.
const zodEnglishOnly: Plugin = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => {
      if (!/[\\/]zod[\\/]v4[\\/](classic[\\/]external|mini[\\/]external|core[\\/]index)\.js$/.test(args.importer))
        return undefined;
      return { path: join(args.resolveDir, '../locales/index.js'), namespace: 'zod-locales' };
    });
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: join(args.path, '..'),
      loader: 'js',
    }));
  },
};

// In Lambda the execution role's credentials are always in the environment. The SDK's default
// chain would also bundle SSO, INI files, web identity, process and container/instance
// metadata providers (~90 kB of every bundle) that can never apply there; the bundles get the
// environment provider alone. (Unbundled code under npm start and tests keeps the full chain.)
const lambdaCredentialsOnly: Plugin = {
  name: 'lambda-credentials-only',
  setup(b) {
    b.onResolve({ filter: /^@aws-sdk\/credential-provider-node$/ }, (args) => ({
      path: args.path,
      namespace: 'lambda-credentials',
      pluginData: { resolveDir: args.resolveDir },
    }));
    b.onLoad({ filter: /.*/, namespace: 'lambda-credentials' }, (args) => ({
      contents: [
        "import { fromEnv } from '@aws-sdk/credential-provider-env';",
        'export const defaultProvider = (init = {}) => fromEnv(init);',
        'export const credentialsWillNeedRefresh = (c) => c?.expiration !== undefined;',
        'export const credentialsTreatedAsExpired = (c) => c?.expiration !== undefined && c.expiration.getTime() - Date.now() < 300000;',
      ].join('\n'),
      resolveDir: (args.pluginData as { resolveDir: string }).resolveDir,
      loader: 'js',
    }));
  },
};

// Tracing (shared/observability/tracing.ts) imports Powertools Tracer and the X-Ray SDK only when it is on.
// Rather than a chunk (which would make every function a code-split build), the tracer is a
// bundle of its own, shipped in each function's node_modules as a package the bundle imports
// by name: resolved the same from index.mjs and from any chunk, read only when imported.
export const TRACER_PACKAGE = 'chat-service-tracer';
const TRACER_SOURCE = 'shared/observability/powertools-tracer.ts';
const tracerApart: Plugin = {
  name: 'tracer-apart',
  setup(b) {
    b.onResolve({ filter: /^\.\/powertools-tracer\.ts$/ }, (args) =>
      args.importer.endsWith(join('shared', 'observability', 'tracing.ts'))
        ? { path: TRACER_PACKAGE, external: true }
        : undefined,
    );
  },
};

interface BuildOptions {
  /** Default: dist/ in the project. Each function gets <outDir>/<name>/. */
  outDir?: string;
  /** Default true (what is deployed); false gives readable bundles for debugging. */
  minify?: boolean;
  /** Build only these manifest functions (default: all of them). */
  only?: string[];
  /** The functions to build (default: the manifest's); tests pass their own. */
  functions?: ManifestFunction[];
  /**
   * Native canvas addons shipped with OCR functions: `npm run build` ships the Lambda one
   * (linux-arm64-gnu, fetched from the npm registry when not cached); tests ship the host's or none.
   */
  canvasBinaries?: string[];
}

export interface BuiltFunction {
  name: string;
  kind: ManifestFunction['kind'];
  dir: string;
  /** What a cold start reads: index.mjs and the chunks it imports statically (what the budget applies to). */
  bytes: number;
  /** The chunks read only through a dynamic import, when a code path first needs them. */
  lazyBytes: number;
  mapBytes: number;
  /** Everything in dir: bundle, map, licences, fonts. */
  assetBytes: number;
  budgetBytes: number;
  /** Whether pdfjs-dist is in the bundle or its pdf.js child (and standard_fonts/, cmaps/ and wasm/ were copied). */
  pdfjs: boolean;
  /** Size of extract-child.mjs, the PDF extraction child bundled beside functions that use it. */
  childBytes?: number;
  /** Packages copied into <dir>/node_modules (the OCR externals and their dependencies). */
  nodeModules: string[];
  /** Largest packages in the bundle, for finding what made it big. */
  largestInputs: { path: string; bytes: number }[];
  /** Every source file in the bundle, relative to the project root (what a rebuild depends on). */
  inputs: string[];
}

export class MissingEntryError extends Error {
  override name = 'MissingEntryError';
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

async function dirSize(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}

/** The packages (or "project sources") taking most of a bundle, for finding what made it big. */
function largestInputs(outputs: Metafile['outputs'][string][]) {
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

/** Lazily loaded parts of a bundle, beside its index.mjs (see buildFunctions). */
export const CHUNKS_DIR = 'chunks';

function mergeMetafiles(metafiles: Metafile[]): Metafile {
  return {
    inputs: Object.assign({}, ...metafiles.map((m) => m.inputs)) as Metafile['inputs'],
    outputs: Object.assign({}, ...metafiles.map((m) => m.outputs)) as Metafile['outputs'],
  };
}

/** The metafile entries of a function's chunks (outputs under <name>/chunks/ that are code). */
function chunksOf(metafile: Metafile, outDir: string, name: string): Metafile['outputs'][string][] {
  const prefix = `${relative(projectRoot, join(outDir, name, CHUNKS_DIR))
    .split(sep)
    .join('/')}/`;
  return Object.entries(metafile.outputs)
    .filter(([key]) => key.startsWith(prefix) && key.endsWith('.mjs'))
    .map(([, output]) => output);
}

/** index.mjs and every chunk it imports statically, transitively: what loading the function reads. */
function loadedAtStart(metafile: Metafile, index: Metafile['outputs'][string]): Set<Metafile['outputs'][string]> {
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

/** Bundles each function; fails with a message naming every manifest entry whose file is missing. */
export async function buildFunctions(options: BuildOptions = {}): Promise<BuiltFunction[]> {
  const outDir = resolve(options.outDir ?? DEFAULT_OUT_DIR);
  const minify = options.minify ?? true;
  let functions = options.functions ?? manifestFunctions;
  if (options.only?.length) {
    const unknown = options.only.filter((n) => !functions.some((f) => f.name === n));
    if (unknown.length) throw new Error(`Not in the manifest (infra/routes.ts): ${unknown.join(', ')}`);
    functions = functions.filter((f) => options.only!.includes(f.name));
  }

  const missing: string[] = [];
  for (const fn of functions)
    if (!(await exists(join(projectRoot, fn.entry)))) missing.push(`${fn.name} → ${fn.entry}`);
  if (missing.length) {
    throw new MissingEntryError(
      `The manifest (infra/routes.ts) lists functions whose entry file does not exist:\n  ${missing.join('\n  ')}`,
    );
  }

  // Two passes. First one esbuild run for every function (shared modules parsed once), each a
  // single file. Then the functions whose own code imports something dynamically (the chosen AI
  // provider's SDK, send-message's file-chat retrieval with the S3 client, pdf.js) are built
  // again on their own with code splitting: what they import dynamically becomes a chunk in their
  // chunks/, read and compiled only when first used, so a cold start pays for none of the code it
  // does not run. (Splitting in the shared run would share chunks across functions' directories.)
  await mkdir(outDir, { recursive: true });
  await Promise.all(functions.map((fn) => rm(join(outDir, fn.name), { recursive: true, force: true })));
  const esbuildOptions = {
    outExtension: { '.js': '.mjs' },
    absWorkingDir: projectRoot,
    bundle: true,
    splitting: false,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    // ESM builds of dependencies first (the AWS SDK's dist-es tree-shakes far better).
    mainFields: ['module', 'main'],
    minify,
    // Error classes name themselves after their constructor (`new.target.name`, jose's errors).
    keepNames: true,
    treeShaking: true,
    sourcemap: 'linked',
    // Stack traces only need the mappings; sources would double the asset for nothing.
    sourcesContent: false,
    legalComments: 'linked',
    banner: { js: BANNER },
    metafile: true,
    plugins: [zodEnglishOnly, lambdaCredentialsOnly, tracerApart, pdfjsWorkerPatch],
    external: OCR_EXTERNALS,
    logLevel: 'silent',
  } as const satisfies BuildOptionsOfEsbuild;
  const failed = (err: Error) => {
    throw new Error(`esbuild failed:\n${err.message}`);
  };
  const shared = await build({
    ...esbuildOptions,
    entryPoints: Object.fromEntries(functions.map((fn) => [`${fn.name}/index`, join(projectRoot, fn.entry)])),
    outdir: outDir,
  }).catch(failed);
  const importsDynamically = (fn: ManifestFunction) =>
    Object.keys(outputOf(shared.metafile, outDir, fn.name, 'index').inputs).some(
      (path) =>
        !path.includes('node_modules/') &&
        shared.metafile.inputs[path]?.imports.some((i) => i.kind === 'dynamic-import' && !i.external),
    );
  const toSplit = functions.filter(importsDynamically);
  await Promise.all(toSplit.map((fn) => rm(join(outDir, fn.name), { recursive: true, force: true })));
  const splits = await Promise.all(
    toSplit.map((fn) =>
      build({
        ...esbuildOptions,
        splitting: true,
        chunkNames: `${CHUNKS_DIR}/[name]-[hash]`,
        entryPoints: { index: join(projectRoot, fn.entry) },
        outdir: join(outDir, fn.name),
      }),
    ),
  ).catch(failed);
  const metafile = mergeMetafiles([shared.metafile, ...splits.map((b) => b.metafile)]);
  // A function's code: its index.mjs and the chunks it loads when needed.
  const codeOf = (fn: ManifestFunction) => [
    outputOf(metafile, outDir, fn.name, 'index'),
    ...chunksOf(metafile, outDir, fn.name),
  ];

  // Functions that read or draw PDFs run pdf.js in a child process (shared/pdf/bounded-child.ts): its
  // script is bundled beside theirs, and pdf.js with it (so index.mjs itself stays small).
  const needsChild = functions.filter((fn) => codeOf(fn).some((o) => Object.keys(o.inputs).includes(BOUNDED_CHILD)));
  const children = needsChild.length
    ? await build({
        ...esbuildOptions,
        entryPoints: Object.fromEntries(
          needsChild.map((fn) => [`${fn.name}/${EXTRACT_CHILD}`, join(projectRoot, EXTRACT_CHILD_SOURCE)]),
        ),
        outdir: outDir,
      }).catch((err: Error) => {
        throw new Error(`esbuild failed:\n${err.message}`);
      })
    : undefined;

  const needsTracer = functions.filter((fn) =>
    codeOf(fn).some((o) => o.imports.some((i) => i.external && i.path === TRACER_PACKAGE)),
  );
  const tracerDir = join(outDir, `.${TRACER_PACKAGE}`);
  if (needsTracer.length) {
    await rm(tracerDir, { recursive: true, force: true });
    await build({
      ...esbuildOptions,
      entryPoints: { index: join(projectRoot, TRACER_SOURCE) },
      outdir: tracerDir,
    }).catch(failed);
    await writeFile(
      join(tracerDir, 'package.json'),
      `${JSON.stringify({ name: TRACER_PACKAGE, private: true, type: 'module', exports: './index.mjs' }, null, 2)}\n`,
    );
  }

  const built = await Promise.all(
    functions.map(async (fn): Promise<BuiltFunction> => {
      const dir = join(outDir, fn.name);
      const file = join(dir, 'index.mjs');
      const code = codeOf(fn);
      const atStart = loadedAtStart(metafile, code[0]!);
      const child =
        children && needsChild.includes(fn) ? outputOf(children.metafile!, outDir, fn.name, EXTRACT_CHILD) : undefined;
      const outputs = child ? [...code, child] : code;
      const pdfjs = outputs.some((o) => Object.keys(o.inputs).some((p) => p.includes('node_modules/pdfjs-dist/')));
      if (pdfjs) {
        await cp(PDFJS_STANDARD_FONTS, join(dir, STANDARD_FONTS_DIR), { recursive: true });
        await cp(PDFJS_CMAPS, join(dir, CMAPS_DIR), { recursive: true });
        // The decoders and their licences; not the JS fallbacks (WebAssembly is always there in
        // Node) nor quickjs (scripting in forms, which pdf.js here never runs).
        await cp(PDFJS_WASM, join(dir, WASM_DIR), {
          recursive: true,
          filter: (path) => !/(_nowasm_fallback\.js|quickjs[^/]*)$/.test(path),
        });
      }
      const externals = OCR_EXTERNALS.filter((name) =>
        outputs.some((o) => o.imports.some((i) => i.external && i.path === name)),
      );
      const nodeModules = externals.length ? await copyOcrPackages(dir, options.canvasBinaries ?? []) : [];
      if (needsTracer.includes(fn)) {
        await cp(tracerDir, join(dir, 'node_modules', TRACER_PACKAGE), { recursive: true });
        nodeModules.push(TRACER_PACKAGE);
      }
      return {
        name: fn.name,
        kind: fn.kind,
        dir,
        bytes: [...atStart].reduce((n, o) => n + o.bytes, 0),
        mapBytes: (await stat(`${file}.map`)).size,
        assetBytes: await dirSize(dir),
        budgetBytes: budgetOf(fn),
        pdfjs,
        ...(child && { childBytes: (await stat(join(dir, `${EXTRACT_CHILD}.mjs`))).size }),
        nodeModules,
        lazyBytes: code.filter((o) => !atStart.has(o)).reduce((n, o) => n + o.bytes, 0),
        largestInputs: largestInputs(code),
        inputs: [...new Set(code.flatMap((o) => Object.keys(o.inputs)))],
      };
    }),
  );
  await rm(tracerDir, { recursive: true, force: true });
  return built;
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
async function copyOcrPackages(dir: string, canvasBinaries: string[]): Promise<string[]> {
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

const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;

/**
 * The size table `npm run build` prints. The budget is for what a cold start reads ("at start"),
 * so that column sits beside it with a verdict; "asset" (everything uploaded: the bundle's
 * lazily loaded chunks, fonts, OCR data, source map) has no budget.
 */
export function sizeTable(built: BuiltFunction[], outDir = DEFAULT_OUT_DIR): string {
  const rows = built.map((b) => [
    b.name,
    b.kind,
    kb(b.bytes),
    `${b.budgetBytes / 1_000_000} MB`,
    b.bytes > b.budgetBytes ? 'OVER BUDGET' : `ok (${Math.round((100 * b.bytes) / b.budgetBytes)} %)`,
    kb(b.mapBytes),
    kb(b.assetBytes),
  ]);
  const header = ['function', 'kind', 'at start', 'budget', 'within budget', 'map', 'asset (no budget)'];
  const rightAligned = new Set([2, 3, 5, 6]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (rightAligned.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const total = built.reduce((sum, b) => sum + b.bytes, 0);
  const over = built.filter((b) => b.bytes > b.budgetBytes).length;
  return [
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    `${built.length} bundles in ${relative(process.cwd(), outDir) || '.'}/, ${kb(total)} read at start in all; ` +
      (over ? `${over} over budget` : 'all within budget'),
  ].join('\n');
}

/** What to say when bundles are over budget (their largest packages), or undefined when none is. */
export function overBudgetReport(built: BuiltFunction[]): string | undefined {
  const over = built.filter((b) => b.bytes > b.budgetBytes);
  if (!over.length) return undefined;
  return over
    .map(
      (b) =>
        `${b.name}: ${kb(b.bytes)} read at start is over its ${b.budgetBytes / 1_000_000} MB budget. Largest packages:\n` +
        b.largestInputs.map((i) => `  ${kb(i.bytes).padStart(10)}  ${i.path}`).join('\n'),
    )
    .join('\n\n');
}

// CLI: `npm run build [-- --no-minify] [-- name ...]`
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const started = Date.now();
  try {
    const built = await buildFunctions({
      minify: !args.includes('--no-minify'),
      canvasBinaries: [LAMBDA_CANVAS_BINARY],
      only: args.filter((a) => !a.startsWith('--')),
    });
    console.log(sizeTable(built));
    console.log(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const over = overBudgetReport(built);
    if (over) {
      console.error(`\n${over}`);
      process.exitCode = 1;
    }
  } catch (err) {
    console.error(asError(err).message);
    process.exitCode = 1;
  }
}
