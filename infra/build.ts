import { access, cp, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { manifestFunctions, type ManifestFunction } from './routes.ts';
import { DEFAULT_OUT_DIR, projectRoot } from './project-paths.ts';
import { budgetOf, overBudgetReport, sizeTable } from './build/budgets.ts';
import {
  BANNER,
  lambdaCredentialsOnly,
  middyLazyWebStreams,
  smithyLazyWebChecksumStream,
  TRACER_PACKAGE,
  TRACER_SOURCE,
  tracerApart,
  zodEnglishOnly,
} from './build/esbuild-plugins.ts';
import {
  CHUNKS_DIR,
  chunksOf,
  dirSize,
  largestInputs,
  loadedAtStart,
  mergeMetafiles,
  outputOf,
} from './build/measure.ts';
import { copyOcrPackages, LAMBDA_CANVAS_BINARY, OCR_EXTERNALS } from './build/ocr-packages.ts';
import { asError } from '#shared/errors.ts';
import { pdfjsWorkerPatch } from '#shared/pdf/pdfjs-worker-patch.ts';
// `npm run build`: one minified ESM bundle per manifest function (HTTP routes and pipeline
// stages) in dist/<name>/index.mjs, with a linked source map. The AWS SDK is bundled rather
// than taken from the Lambda runtime, so what we test is what runs. Functions that read PDFs get
// the pdf.js child (extract-child.mjs, with pdfjs-dist) and pdfjs's standard_fonts/, cmaps/ and
// wasm/ directories beside the bundle.

// What the stack, the local runtime, the bench and the tests take from the build.
export { DEFAULT_OUT_DIR, projectRoot } from './project-paths.ts';
export { HTTP_BUNDLE_BUDGET_BYTES, overBudgetReport, sizeTable } from './build/budgets.ts';
export { TRACER_PACKAGE } from './build/esbuild-plugins.ts';
export { CHUNKS_DIR } from './build/measure.ts';
export { LAMBDA_CANVAS_BINARY } from './build/ocr-packages.ts';

/** The bounded pdf.js child (shared/pdf/bounded-child.ts: extraction, drawing) forks `<EXTRACT_CHILD>.mjs` beside the bundle. */
const BOUNDED_CHILD = 'shared/pdf/bounded-child.ts';
export const EXTRACT_CHILD = 'extract-child';
const EXTRACT_CHILD_SOURCE = 'shared/pdf/extract-child.ts';

type BuildOptionsOfEsbuild = Parameters<typeof build>[0];

/** Where the bundle of a function that uses pdfjs finds the standard fonts (see shared/pdf). */
export const STANDARD_FONTS_DIR = 'standard_fonts';
const PDFJS_STANDARD_FONTS = join(projectRoot, 'node_modules/pdfjs-dist/standard_fonts');
/** pdf.js's packed CMaps (CJK fonts with predefined CMaps), beside the bundle too. */
export const CMAPS_DIR = 'cmaps';
const PDFJS_CMAPS = join(projectRoot, 'node_modules/pdfjs-dist/cmaps');
/** pdf.js's WebAssembly image decoders (JBIG2 and CCITT fax, JPX, ICC colours), beside the bundle too. */
export const WASM_DIR = 'wasm';
const PDFJS_WASM = join(projectRoot, 'node_modules/pdfjs-dist/wasm');

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
    await access(join(projectRoot, fn.entry)).catch(() => missing.push(`${fn.name} → ${fn.entry}`));
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
    plugins: [
      zodEnglishOnly,
      lambdaCredentialsOnly,
      tracerApart,
      middyLazyWebStreams,
      smithyLazyWebChecksumStream,
      pdfjsWorkerPatch,
    ],
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
