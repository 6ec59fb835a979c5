import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Annotations, App, Tags, Validations, type AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { ConfigError } from '#shared/config.ts';
import { DEFAULT_OUT_DIR, projectRoot } from './build.ts';
import { readSettings, type StackSettings } from './settings.ts';
import { StatefulStack } from './stacks/stateful-stack.ts';
import { StatelessStack, type CodeFactory } from './stacks/stateless-stack.ts';

// The CDK app: a stateful stack (table, bucket, secret, queues) and a stateless one (functions,
// API), both generated from infra/routes.ts. `npm run synth` (infra/synth.ts) checks the
// settings, builds the bundles and writes cdk.out/ offline; `npx cdk deploy --all` deploys
// (see the README, "Deploy with CDK").

interface ServiceAppOptions {
  app?: App;
  /** Lambda code per function; default: the esbuild bundles in distDir. */
  code?: CodeFactory;
  distDir?: string;
  /** The environment function settings are read from (default process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface ServiceApp {
  app: App;
  settings: StackSettings;
  stateful: StatefulStack;
  stateless: StatelessStack;
}

/** Code from dist/<name>/, failing early with the fix when a bundle is missing. */
function bundleCode(distDir = DEFAULT_OUT_DIR): CodeFactory {
  return (fn) => {
    const dir = join(distDir, fn.name);
    if (!existsSync(join(dir, 'index.mjs'))) {
      throw new Error(
        `No bundle for ${fn.name} in ${relative(process.cwd(), dir) || dir}: run \`npm run build\` first`,
      );
    }
    return lambda.Code.fromAsset(dir);
  };
}

export function createServiceApp(options: ServiceAppOptions = {}): ServiceApp {
  const app = options.app ?? new App();
  const settings = readSettings((key) => app.node.tryGetContext(key), options.env ?? process.env);
  // Account and region from the CLI's profile when deploying; environment-agnostic otherwise.
  const env =
    process.env.CDK_DEFAULT_ACCOUNT || process.env.CDK_DEFAULT_REGION
      ? { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION }
      : undefined;

  const stateful = new StatefulStack(app, `${settings.serviceName}Stateful`, {
    settings,
    description: 'Chat, orders and PDF service: table, bucket, secret, queues (stateful)',
    ...(env && { env }),
  });
  const stateless = new StatelessStack(app, `${settings.serviceName}Stateless`, {
    settings,
    stateful,
    code: options.code ?? bundleCode(options.distDir),
    description: 'Chat, orders and PDF service: functions and REST API (stateless)',
    ...(env && { env }),
  });
  Tags.of(app).add('service', settings.serviceName);
  for (const warning of settings.warnings) Annotations.of(stateless).addWarningV2('chat-service:settings', warning);
  return { app, settings, stateful, stateless };
}

/** cdk.json's context, for running the app without the CDK CLI (which passes it itself). */
function cdkJsonContext(): Record<string, unknown> {
  const file = join(projectRoot, 'cdk.json');
  if (!existsSync(file)) return {};
  return (JSON.parse(readFileSync(file, 'utf8')) as { context?: Record<string, unknown> }).context ?? {};
}

/**
 * Synthesizes the app with cdk-nag's packs (a finding neither fixed nor acknowledged, with its
 * reason, stops the synth). Alone, writes ./cdk.out and says what was written; under the CLI
 * (CDK_OUTDIR and CDK_CONTEXT_JSON set, and they win) the CLI reports, warnings included.
 */
export function synthesizeApp(context: Record<string, unknown> = cdkJsonContext()): void {
  const props: AppProps = { outdir: process.env.CDK_OUTDIR ?? join(projectRoot, 'cdk.out'), context };
  const { app, stateful, stateless, settings } = createServiceApp({ app: new App(props) });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
  const assembly = app.synth();
  if (process.env.CDK_OUTDIR) return;
  for (const warning of settings.warnings) console.warn(`warning: ${warning}`);
  console.log(`Synthesized to ${relative(process.cwd(), assembly.directory) || '.'}/:`);
  for (const stack of [stateful, stateless]) console.log(`  ${stack.templateFile}`);
  console.log(`  ${Object.keys(stateless.functions).length} functions`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    synthesizeApp();
  } catch (err) {
    console.error(err instanceof ConfigError ? err.message : err);
    process.exitCode = 1;
  }
}
