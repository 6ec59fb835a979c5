import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { ConfigError } from '#shared/config.ts';
import { readSettings } from './settings.ts';

// `npm run synth [-- -c KEY=value ...]`: checks every setting first (in seconds, naming each
// problem), and only then builds the bundles (half a minute) and synthesizes cdk.out/ offline.
// The CDK CLI's own `npx cdk synth` runs infra/app.ts, which checks the same settings.

const USAGE = 'usage: npm run synth [-- -c KEY=value ...]  (also --context KEY=value; cdk.json "context" is read too)';

/** `-c KEY=value` / `--context KEY=value` pairs, as the CDK CLI takes them. */
export function parseContextArgs(args: string[]): Record<string, string> {
  const context: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const inline = /^(?:-c|--context)=(.*)$/.exec(arg);
    const pair = inline ? inline[1] : arg === '-c' || arg === '--context' ? args[++i] : undefined;
    const match = pair === undefined ? null : /^([^=\s]+)=(.*)$/s.exec(pair);
    if (!match) throw new ConfigError(`Not a context setting: ${pair ?? arg}\n${USAGE}`);
    context[match[1]!] = match[2]!;
  }
  return context;
}

async function main(): Promise<void> {
  const started = performance.now();
  // cdk.json's context read here: app.ts would load aws-cdk-lib first, seconds on its own.
  const cdkJson = JSON.parse(await readFile(new URL('../cdk.json', import.meta.url), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  const context = { ...cdkJson.context, ...parseContextArgs(process.argv.slice(2)) };
  readSettings((key) => context[key]);
  console.log(`settings checked in ${((performance.now() - started) / 1000).toFixed(1)} s; building the bundles`);

  const { buildFunctions, sizeTable, overBudgetReport, LAMBDA_CANVAS_BINARY } = await import('./build.ts');
  const built = await buildFunctions({ minify: true, canvasBinaries: [LAMBDA_CANVAS_BINARY] });
  console.log(sizeTable(built));
  const over = overBudgetReport(built);
  if (over) throw new ConfigError(over);

  const { synthesizeApp } = await import('./app.ts');
  synthesizeApp(context);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    await main();
  } catch (err) {
    console.error(err instanceof ConfigError ? err.message : err);
    process.exitCode = 1;
  }
}
