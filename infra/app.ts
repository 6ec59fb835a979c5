import { existsSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Annotations, App, Tags, Validations, type AppProps } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { ConfigError } from '#shared/config.ts';
import { DEFAULT_OUT_DIR, projectRoot } from './build.ts';
import { readSettings, type StackSettings } from './settings.ts';
import { manifestFunctions } from './routes.ts';
import type { ServiceFunction } from './constructs/service-function.ts';
import { ApiStack } from './stacks/api-stack.ts';
import { FunctionsStack, type CodeFactory } from './stacks/functions-stack.ts';
import { MonitoringStack } from './stacks/monitoring-stack.ts';
import { StatefulStack } from './stacks/stateful-stack.ts';

// The CDK app, generated from infra/routes.ts: a stateful stack (table, bucket, secret, queues)
// and four stateless ones, each well within CloudFormation's 500 resources: the HTTP functions,
// the workers (pipeline stages, dead-letter consumers, scheduled tasks), the REST API, and the
// alarms with the dashboard (docs/DECISIONS.md "Stacks within CloudFormation's limits").
// `npm run synth` (infra/synth.ts) checks the settings, builds the bundles and writes cdk.out/
// offline; `npx cdk deploy --all` deploys (see the README, "Deploy with CDK").

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
  /** The HTTP routes' functions. */
  apiFunctions: FunctionsStack;
  /** Pipeline stages with their SQS event sources, dead-letter consumers, scheduled tasks. */
  workers: FunctionsStack;
  /** The REST API (the stack keeps the name <serviceName>Stateless it had when it held everything). */
  api: ApiStack;
  /** Function and API alarms, the dashboard. */
  monitoring: MonitoringStack;
  /** Every manifest function, whichever stack holds it. */
  functions: Record<string, ServiceFunction>;
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
  const code = options.code ?? bundleCode(options.distDir);
  const functionsStack = (id: string, description: string, functions: typeof manifestFunctions) =>
    new FunctionsStack(app, `${settings.serviceName}${id}`, {
      settings,
      stateful,
      code,
      functions,
      description: `Chat, orders and PDF service: ${description} (stateless)`,
      ...(env && { env }),
    });
  const apiFunctions = functionsStack(
    'ApiFunctions',
    'the functions of the HTTP routes',
    manifestFunctions.filter((f) => f.kind === 'http'),
  );
  const workers = functionsStack(
    'Workers',
    'pipeline stages, dead-letter consumers, scheduled tasks',
    manifestFunctions.filter((f) => f.kind !== 'http'),
  );
  // The API keeps the stack name of the former single stateless stack: updating a deployment
  // keeps the REST API, its id and its URL (docs/DECISIONS.md "Stacks within CloudFormation's limits").
  const api = new ApiStack(app, `${settings.serviceName}Stateless`, {
    settings,
    description: 'Chat, orders and PDF service: REST API (stateless)',
    ...(env && { env }),
  });
  const monitoring = new MonitoringStack(app, `${settings.serviceName}Monitoring`, {
    settings,
    stateful,
    description: 'Chat, orders and PDF service: alarms and dashboard',
    ...(env && { env }),
  });
  // Functions are named, not imported, so the order is explicit: the API integrates functions that
  // must exist, and the monitoring stack comes after the API stack, which held the dashboard (and
  // its name) before the split.
  api.addStackDependency(apiFunctions, 'integrates the HTTP functions by name');
  monitoring.addStackDependency(apiFunctions, 'alarms on the HTTP functions by name');
  monitoring.addStackDependency(workers, 'alarms on the workers by name');
  monitoring.addStackDependency(api, 'alarms on the API by name; its dashboard takes the name the API stack held');
  Tags.of(app).add('service', settings.serviceName);
  for (const warning of settings.warnings) Annotations.of(api).addWarningV2('chat-service:settings', warning);
  const functions = { ...apiFunctions.functions, ...workers.functions };
  return { app, settings, stateful, apiFunctions, workers, api, monitoring, functions };
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
  const { app, settings, functions, ...stacks } = createServiceApp({ app: new App(props) });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
  const assembly = app.synth();
  if (process.env.CDK_OUTDIR) return;
  for (const warning of settings.warnings) console.warn(`warning: ${warning}`);
  console.log(`Synthesized to ${relative(process.cwd(), assembly.directory) || '.'}/:`);
  for (const stack of Object.values(stacks)) console.log(`  ${stack.templateFile}`);
  console.log(`  ${Object.keys(functions).length} functions`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  try {
    synthesizeApp();
  } catch (err) {
    console.error(err instanceof ConfigError ? err.message : err);
    process.exitCode = 1;
  }
}
