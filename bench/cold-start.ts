import { execFile } from 'node:child_process';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { buildFunctions, HTTP_BUNDLE_BUDGET_BYTES, type BuiltFunction } from '../infra/build.ts';
import { manifestFunctions, type ManifestFunction } from '../infra/routes.ts';
import { projectRoot } from '../infra/local/runtime.ts';
import type { Benchmark } from './lib/context.ts';
import { absoluteCheck, info, median, ratioCheck, type Check } from './lib/report.ts';

// Cold start: every function bundle built exactly as `npm run build` builds it (infra/build.ts),
// its size, and the median time to import it in a fresh Node process, against a baseline bundle
// that only creates a DynamoDB document client, built the same way in the same run.
// Targets: every API bundle ≤ 1 MB and its import ≤ 1.5 × the baseline's; pdf-extract ≤ 4 MB.

const run = promisify(execFile);

export const RUNS = 10;
const IMPORT_RATIO_MAX = 1.5;
const PDF_EXTRACT_MAX_BYTES = 4_000_000;

export const BASELINE: ManifestFunction = {
  name: 'baseline-dynamodb-client',
  entry: 'bench/fixtures/baseline-handler.ts',
  kind: 'http',
  timeoutSeconds: 29,
  memoryMb: 1024,
  access: {},
};

/** Bundles between the baseline and a real API function, each adding one layer (the breakdown). */
export const LAYERS: { fn: ManifestFunction; adds: string; alternative?: boolean }[] = [
  ['1-zod', 'zod/mini (shared/zod.ts, English locale), one schema'],
  ['2-config', "the configuration: the HTTP layer's pieces of shared/config/ built and parsed"],
  ['3-libraries', 'middy, jose, Powertools logger, the id generator'],
  ['3b-metrics', 'Powertools Metrics (shared/observability/metrics.ts, a namespace set)'],
  ['4-http-layer', 'the shared HTTP layer (shared/http/handler.ts) around a no-op route'],
  ['alt-zod-classic', 'for comparison, instead of layer 1: the same schema with zod classic (before)', true],
].map(([name, adds, alternative]) => ({
  fn: {
    name: `layer-${name}`,
    entry: `bench/fixtures/import-layers/${name}.ts`,
    kind: 'http',
    timeoutSeconds: 29,
    memoryMb: 1024,
    access: {},
  },
  adds: adds as string,
  ...(alternative === true && { alternative: true }),
}));

/** What the functions read at module scope, as the stack sets it (values never used here). */
export const BUNDLE_ENV: Record<string, string> = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
  TABLE_NAME: 'bench',
  BUCKET_NAME: 'bench',
  PDF_FETCH_QUEUE_URL: 'http://127.0.0.1:9/queue/pdf-fetch',
  PDF_EXTRACT_QUEUE_URL: 'http://127.0.0.1:9/queue/pdf-extract',
  PDF_EMBED_QUEUE_URL: 'http://127.0.0.1:9/queue/pdf-embed',
  SERVICE_JWT_SECRET: 'bench-secret-bench-secret-bench-secret!',
  IDP_JWKS_URL: 'http://127.0.0.1:9/jwks.json',
  IDP_ISSUER: 'https://idp.bench.invalid',
  IDP_AUDIENCE: 'bench',
  LOG_LEVEL: 'SILENT',
};

const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

/** The useful end of a failed child's stderr (a minified bundle's source line is left out). */
export function childError(err: unknown): string {
  const stderr = String((err as { stderr?: string }).stderr ?? (err as Error).message);
  return stderr
    .split('\n')
    .filter((l) => l.length < 400)
    .join('\n')
    .trim()
    .slice(-1500);
}

/**
 * send-message imported with each AI provider chosen: its module scope awaits the provider, and
 * shared/ai/provider.ts imports only the chosen provider's module (and so its SDK). The endpoints
 * are never called.
 */
export const PROVIDER_ENV: Record<'offline' | 'openai' | 'bedrock', Record<string, string>> = {
  offline: { AI_PROVIDER: 'offline' },
  openai: { AI_PROVIDER: 'openai', OPENAI_API_KEY: 'bench-key', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' },
  bedrock: { AI_PROVIDER: 'bedrock', BEDROCK_REGION: 'us-east-1', BEDROCK_ENDPOINT: 'http://127.0.0.1:9' },
};
const PROVIDER_FUNCTION = 'send-message';

/**
 * Tracing on, as the stack sets it (`-c tracing=true`) and Lambda runs it: shared/observability/tracing.ts then
 * imports Powertools Tracer and the X-Ray SDK (a package beside the bundle) at cold start.
 */
export const TRACING_ENV: Record<string, string> = {
  POWERTOOLS_TRACE_ENABLED: 'true',
  AWS_LAMBDA_FUNCTION_NAME: 'bench',
  AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
  _X_AMZN_TRACE_ID: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
};
/** Bundles imported with tracing off (as deployed by default) and on. */
const TRACED = ['layer-4-http-layer', 'list-chats', PROVIDER_FUNCTION];
const tracedName = (name: string) => `${name} [tracing on]`;

/** One import of a bundle in a fresh process; ms. */
async function importOnce(bundle: string, extraEnv: Record<string, string> = {}): Promise<number> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    ...BUNDLE_ENV,
    ...extraEnv,
  };
  try {
    const { stdout } = await run(
      process.execPath,
      [join(projectRoot, 'bench/lib/import-child.mjs'), pathToFileURL(bundle).href],
      { env, timeout: 60_000 },
    );
    return (JSON.parse(stdout) as { ms: number }).ms;
  } catch (err) {
    throw new Error(`importing ${bundle} failed: ${childError(err)}`);
  }
}

/** Bundles every manifest function whose entry exists, plus the baseline, into `outDir`. */
export async function buildAll(outDir: string): Promise<{ built: BuiltFunction[]; missing: string[] }> {
  const present: ManifestFunction[] = [];
  const missing: string[] = [];
  for (const fn of manifestFunctions) {
    if (await exists(join(projectRoot, fn.entry))) present.push(fn);
    else missing.push(fn.name);
  }
  const built = await buildFunctions({ outDir, functions: [BASELINE, ...LAYERS.map((l) => l.fn), ...present] });
  return { built, missing };
}

/** The bundle of one manifest function: the one cold-start built in this run, else built now. */
export async function bundleOf(tmpDir: string, name: string): Promise<string> {
  const built = join(tmpDir, 'dist', name, 'index.mjs');
  if (await exists(built)) return built;
  const fn = name === BASELINE.name ? BASELINE : manifestFunctions.find((f) => f.name === name);
  if (!fn) throw new Error(`${name} is not in the manifest`);
  const [one] = await buildFunctions({ outDir: join(tmpDir, 'dist-single'), functions: [fn] });
  return join(one!.dir, 'index.mjs');
}

export const coldStart: Benchmark = {
  name: 'cold-start',
  title: 'bundle size and import time in a fresh Node process, against a DynamoDB-client-only bundle',
  async run(ctx) {
    ctx.log('cold-start: building the bundles');
    const { built, missing } = await buildAll(join(ctx.tmpDir, 'dist'));
    const bundle = (b: BuiltFunction) => join(b.dir, 'index.mjs');

    // One unmeasured import each (disk cache), then RUNS rounds, each in a shuffled order, so
    // drift in the machine's load spreads evenly over the bundles.
    // Each bundle once as the stack configures it, plus send-message once per AI provider.
    const providerBundle = built.find((b) => b.name === PROVIDER_FUNCTION);
    const variantName = (provider: string) => `${PROVIDER_FUNCTION} [AI_PROVIDER=${provider}]`;
    const imports: { name: string; file: string; env?: Record<string, string> }[] = [
      ...built.map((b) => ({ name: b.name, file: bundle(b) })),
      ...(providerBundle
        ? Object.entries(PROVIDER_ENV).map(([p, env]) => ({ name: variantName(p), file: bundle(providerBundle), env }))
        : []),
      ...built
        .filter((b) => TRACED.includes(b.name))
        .map((b) => ({ name: tracedName(b.name), file: bundle(b), env: TRACING_ENV })),
    ];
    ctx.log(`cold-start: importing ${imports.length} bundles ${RUNS} times each`);
    for (const i of imports) await importOnce(i.file, i.env);
    const samples = new Map<string, number[]>(imports.map((i) => [i.name, []]));
    for (let round = 0; round < RUNS; round++) {
      const order = [...imports].sort(() => Math.random() - 0.5);
      for (const i of order) samples.get(i.name)!.push(await importOnce(i.file, i.env));
    }

    const base = built.find((b) => b.name === BASELINE.name)!;
    const baseImport = median(samples.get(base.name)!);
    const layerNames = new Set(LAYERS.map((l) => l.fn.name));
    const layerRows: (string | number)[][] = [];
    let previous = baseImport;
    for (const layer of LAYERS) {
      const b = built.find((x) => x.name === layer.fn.name)!;
      const p50 = median(samples.get(b.name)!);
      // An alternative is compared with the baseline, not with the layer before it.
      const from = layer.alternative ? baseImport : previous;
      layerRows.push([b.name, layer.adds, b.bytes / 1000, p50, p50 - from, `${(p50 / baseImport).toFixed(2)} ×`]);
      if (!layer.alternative) previous = p50;
    }
    const checks: Check[] = [
      info('baseline bundle size', base.bytes / 1000, 'KB'),
      info('baseline import p50', baseImport, 'ms'),
    ];
    const rows: (string | number)[][] = [];
    for (const b of built) {
      if (b === base || layerNames.has(b.name)) continue;
      const p50 = median(samples.get(b.name)!);
      const s = samples.get(b.name)!;
      rows.push([
        b.name,
        b.kind,
        b.bytes / 1000,
        b.lazyBytes / 1000,
        `${(b.bytes / base.bytes).toFixed(2)} ×`,
        p50,
        Math.min(...s),
        Math.max(...s),
        `${(p50 / baseImport).toFixed(2)} ×`,
      ]);
      /** What a cold start reads of the bundle, against `maxBytes` and beside the baseline's. */
      const sizeCheck = (maxBytes: number) =>
        absoluteCheck(
          `${b.name} size`,
          b.bytes / 1000,
          'KB',
          { max: maxBytes / 1000 },
          { baseline: base.bytes / 1000, ratio: b.bytes / base.bytes },
        );
      if (b.kind === 'http') {
        checks.push(sizeCheck(HTTP_BUNDLE_BUDGET_BYTES));
        checks.push(ratioCheck(`${b.name} import p50`, p50, baseImport, 'ms', { max: IMPORT_RATIO_MAX }));
      } else if (b.name === 'pdf-extract') {
        checks.push(sizeCheck(PDF_EXTRACT_MAX_BYTES));
        checks.push(info(`${b.name} import p50`, p50, 'ms', { baseline: baseImport, ratio: p50 / baseImport }));
      } else {
        checks.push(
          info(`${b.name} size`, b.bytes / 1000, 'KB', { baseline: base.bytes / 1000, ratio: b.bytes / base.bytes }),
        );
        checks.push(info(`${b.name} import p50`, p50, 'ms', { baseline: baseImport, ratio: p50 / baseImport }));
      }
    }
    const providerRows: (string | number)[][] = [];
    if (providerBundle) {
      const offline = median(samples.get(variantName('offline'))!);
      for (const provider of Object.keys(PROVIDER_ENV)) {
        const p50 = median(samples.get(variantName(provider))!);
        providerRows.push([variantName(provider), p50, p50 - offline, `${(p50 / baseImport).toFixed(2)} ×`]);
        checks.push(
          ratioCheck(`${variantName(provider)} import p50`, p50, baseImport, 'ms', { max: IMPORT_RATIO_MAX }),
        );
      }
    }
    const tracingRows: (string | number)[][] = [];
    for (const name of TRACED) {
      if (!samples.has(tracedName(name))) continue;
      const off = median(samples.get(name)!);
      const on = median(samples.get(tracedName(name))!);
      tracingRows.push([
        name,
        off,
        on,
        on - off,
        `${(off / baseImport).toFixed(2)} ×`,
        `${(on / baseImport).toFixed(2)} ×`,
      ]);
      checks.push(info(`${tracedName(name)} import p50`, on, 'ms', { baseline: off, ratio: on / off }));
    }
    const notes = [
      `import time: median of ${RUNS} fresh \`node\` processes per bundle (bench/lib/import-child.mjs), module evaluation included; size: what a cold start reads, index.mjs and the chunks it imports statically (decimal KB; the size target is on it), the 1.5 × target on the import time; lazy KB: chunks read only through a dynamic import, when a code path first needs them (the chosen AI provider, send-message's file-chat retrieval with the S3 client, SDK parts Lambda never uses; only functions whose own code imports dynamically are split).`,
    ];
    if (missing.length) notes.push(`not built (entry file not there yet): ${missing.join(', ')}`);
    const biggest = built
      .filter((b) => b.kind === 'http' && b !== base && !layerNames.has(b.name))
      .sort((a, b) => b.bytes - a.bytes)[0];
    if (biggest)
      notes.push(
        `largest API bundle ${biggest.name}; its largest inputs: ${biggest.largestInputs.map((i) => `${i.path} ${(i.bytes / 1000).toFixed(0)} KB`).join(', ')}`,
      );
    return {
      checks,
      details: [
        {
          title: 'per bundle',
          header: [
            'function',
            'kind',
            'size KB',
            'lazy KB',
            'size / baseline',
            'import p50 ms',
            'min',
            'max',
            'import / baseline',
          ],
          rows: [
            [
              base.name,
              'baseline',
              base.bytes / 1000,
              base.lazyBytes / 1000,
              '1.00 ×',
              baseImport,
              Math.min(...samples.get(base.name)!),
              Math.max(...samples.get(base.name)!),
              '1.00 ×',
            ],
            ...rows,
          ],
        },
        {
          title: `${PROVIDER_FUNCTION} with each AI provider (one bundle; only the chosen provider's chunk is read)`,
          header: ['import', 'import p50 ms', '+ms vs offline', 'import / baseline'],
          rows: providerRows,
        },
        {
          title:
            'tracing: the same bundles imported with tracing off (the default: the tracer is never read) and on (Powertools Tracer and the X-Ray SDK loaded at cold start)',
          header: ['bundle', 'off p50 ms', 'on p50 ms', '+ms', 'off / baseline', 'on / baseline'],
          rows: tracingRows,
        },
        {
          title:
            'where the import time goes: bundles adding one layer at a time to the baseline (bench/fixtures/import-layers)',
          header: ['bundle', 'adds', 'size KB', 'import p50 ms', '+ms', 'import / baseline'],
          rows: [[base.name, 'a DynamoDB document client', base.bytes / 1000, baseImport, '', '1.00 ×'], ...layerRows],
        },
      ],
      notes,
      data: { samples: Object.fromEntries(samples), sizes: Object.fromEntries(built.map((b) => [b.name, b.bytes])) },
    };
  },
};
