import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations, type CfnElement } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { Template, Match } from 'aws-cdk-lib/assertions';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { createServiceApp, type ServiceApp } from '#infra/app.ts';
import {
  deadLetterConsumerList,
  scheduledTaskList,
  httpRouteList,
  manifestFunctions,
  pipelineStageList,
  queueUrlSetting,
  webhookDelivery,
  type BucketPrefix,
  type ManifestFunction,
} from '#infra/routes.ts';
import { tableDefinition } from '#infra/table.ts';
import { METRIC } from '#shared/observability/metrics.ts';
import {
  MAX_FUNCTION_NAME_LENGTH,
  readSettings,
  SettingsError,
  serviceFunctionName,
  stageConcurrencyKey,
} from '#infra/settings.ts';
import { resourceFor, API_STAGE, MAX_BUFFERED_INTEGRATION_SECONDS } from '#infra/stacks/api-stack.ts';
import { gatewayMethodBody, gatewayMethods } from '#infra/gateway-responses.ts';
import type { FunctionsStack } from '#infra/stacks/functions-stack.ts';
import { UPLOADS_PREFIX, VISIBILITY_TIMEOUT_FACTOR, WORK_PREFIX } from '#infra/stacks/stateful-stack.ts';
import { VECTORS_PREFIX } from '#shared/files/storage.ts';
import * as storageKeys from '#shared/files/storage.ts';
import { sourceKey, uploadKey, vectorsKey } from '#shared/files/storage.ts';
import {
  BUCKET_LIST_ACTIONS,
  BUCKET_READ_ACTIONS,
  BUCKET_WRITE_ACTIONS,
  TABLE_READ_ACTIONS,
  TABLE_WRITE_ACTIONS,
} from '#infra/constructs/service-function.ts';

// The stacks as CloudFormation sees them, generated from the manifest: every check iterates
// infra/routes.ts, so a route added tomorrow is covered without touching this file. Code is a
// placeholder here (test/infra/build.test.ts synthesizes from the real bundles).

type Resources = Record<string, { Type: string; Properties: any; DependsOn?: unknown }>;

const placeholder = () => lambda.Code.fromInline('export const handler = async () => ({ statusCode: 200, body: "" });');

/** What a deployment must name: an identity provider and the web app's origin. */
const ORIGIN = 'https://app.example.com';
const DEPLOY = { IDP_PRESET: 'firebase', FIREBASE_PROJECT_ID: 'my-project', CORS_ALLOW_ORIGIN: ORIGIN };

function synth(
  context: Record<string, unknown> = {},
  env: NodeJS.ProcessEnv = {},
  base: Record<string, unknown> = DEPLOY,
): ServiceApp & {
  stateful: Stack;
  statefulTemplate: Template;
  apiTemplate: Template;
  monitoringTemplate: Template;
  /** The resources of both functions stacks (HTTP functions and workers), by logical id. */
  functionResources: Resources;
  /** The functions stack holding a manifest function. */
  stackOf: (name: string) => FunctionsStack;
  /** Every stateless stack's template (functions, workers, API, monitoring) as one JSON text. */
  statelessJson: string;
} {
  const app = new App({ context: { ...base, ...context } });
  const service = createServiceApp({ app, code: placeholder, env });
  const functionResources: Resources = {};
  for (const stack of [service.apiFunctions, service.workers]) {
    for (const [id, resource] of Object.entries(Template.fromStack(stack).toJSON().Resources as Resources)) {
      if (functionResources[id]) throw new Error(`logical id ${id} in both functions stacks`);
      functionResources[id] = resource;
    }
  }
  return {
    ...service,
    statefulTemplate: Template.fromStack(service.stateful),
    apiTemplate: Template.fromStack(service.api),
    monitoringTemplate: Template.fromStack(service.monitoring),
    functionResources,
    statelessJson: JSON.stringify(
      [service.apiFunctions, service.workers, service.api, service.monitoring].map((st) =>
        Template.fromStack(st).toJSON(),
      ),
    ),
    stackOf: (name) => {
      const stack = [service.apiFunctions, service.workers].find((st) => st.functions[name]);
      if (!stack) throw new Error(`no stack holds ${name}`);
      return stack;
    },
  };
}

/** The logical id of a manifest function's Lambda (or its role) in the functions stack holding it. */
function lambdaId(t: ReturnType<typeof synth>, name: string, part: 'function' | 'role' = 'function'): string {
  const stack = t.stackOf(name);
  return logicalId(stack, stack.functions[name]![part]);
}

const logicalId = (stack: Stack, construct: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);

/** Export name → logical id of the stateful resource it exports (cross-stack references). */
function exportedIds(template: Template): Map<string, string> {
  const out = new Map<string, string>();
  for (const output of Object.values(template.toJSON().Outputs ?? {}) as any[]) {
    const value = output.Value;
    const id = value?.Ref ?? value?.['Fn::GetAtt']?.[0];
    if (output.Export?.Name && id) out.set(output.Export.Name, id);
  }
  return out;
}

let s: ReturnType<typeof synth>;
let functionResources: Resources;
let apiResources: Resources;
let monitoringResources: Resources;
let statefulResources: Resources;

beforeAll(() => {
  s = synth();
  functionResources = s.functionResources;
  apiResources = s.apiTemplate.toJSON().Resources;
  monitoringResources = s.monitoringTemplate.toJSON().Resources;
  statefulResources = s.statefulTemplate.toJSON().Resources;
});

const byType = (resources: Resources, type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);

/** The statements of the inline policies on the role of function `name` in `t`. */
function roleStatements(t: ReturnType<typeof synth>, name: string): any[] {
  const roleId = lambdaId(t, name, 'role');
  return byType(t.functionResources, 'AWS::IAM::Policy')
    .filter(([, p]) => p.Properties.Roles.some((r: any) => r.Ref === roleId))
    .flatMap(([, p]) => p.Properties.PolicyDocument.Statement);
}

/** The environment variables of function `name` in `t`. */
const envOf = (t: ReturnType<typeof synth>, name: string) =>
  t.functionResources[lambdaId(t, name)]!.Properties.Environment.Variables;

/** Every function's environment holds `settings` and none of the variables named in `absent`. */
function expectEveryEnvironment(t: ReturnType<typeof synth>, settings: Record<string, string>, absent: string[]) {
  for (const fn of manifestFunctions) {
    const vars = envOf(t, fn.name);
    expect(vars).toMatchObject(settings);
    for (const name of absent) expect(vars[name]).toBeUndefined();
  }
}

/** Whether a policy statement grants a Bedrock action. */
const grantsBedrock = (st: any) => [st.Action].flat().some((a: string) => a.startsWith('bedrock:'));

/** The name of the function a REST API method integrates (its URI names it: arn:…:function:<name>/…). */
const invokedName = (method: { Properties: any }) =>
  /:function:([^/"]+)\//.exec(JSON.stringify(method.Properties.Integration?.Uri ?? ''))?.[1];

function functionOf(fn: ManifestFunction) {
  const id = lambdaId(s, fn.name);
  const resource = functionResources[id];
  if (!resource) throw new Error(`no function resource for ${fn.name}`);
  return { id, props: resource.Properties };
}

/** Every action a function's role may take, with the resources, from its inline policies. */
function statementsOf(fn: ManifestFunction): { actions: string[]; resources: unknown[] }[] {
  return roleStatements(s, fn.name).map((st: any) => ({
    actions: [st.Action].flat(),
    resources: [st.Resource].flat(),
  }));
}

/** CloudFormation refuses a template over 500 resources; this leaves room for the routes to come. */
const MAX_STACK_RESOURCES = 400;

describe('stacks', () => {
  const stacksOf = (t: ServiceApp) => t.app.node.children.filter((c): c is Stack => Stack.isStack(c));
  const resourceCount = (stack: Stack) => Object.keys(Template.fromStack(stack).toJSON().Resources).length;

  test(`five stacks, each at most ${MAX_STACK_RESOURCES} resources (CloudFormation allows 500), with every optional part on too`, () => {
    const full = synth({
      tracing: 'true',
      VECTOR_STORE: 's3vectors',
      AI_PROVIDER: 'bedrock',
      paymentsSecret: 'prod/payments',
    });
    for (const t of [s, full]) {
      expect(stacksOf(t).map((st) => st.stackName)).toEqual([
        'ChatServiceStateful',
        'ChatServiceApiFunctions',
        'ChatServiceWorkers',
        'ChatServiceStateless',
        'ChatServiceMonitoring',
      ]);
      for (const stack of stacksOf(t))
        expect([stack.stackName, resourceCount(stack) <= MAX_STACK_RESOURCES]).toEqual([stack.stackName, true]);
    }
  });

  test('the HTTP functions in one stack, the workers in another; the API and monitoring stacks hold none', () => {
    const lambdas = (stack: Stack) =>
      Object.values(Template.fromStack(stack).findResources('AWS::Lambda::Function')).map(
        (r) => r.Properties.FunctionName as string,
      );
    const named = (kind: (k: ManifestFunction['kind']) => boolean) =>
      manifestFunctions.filter((f) => kind(f.kind)).map((f) => serviceFunctionName('ChatService', f.name));
    expect(lambdas(s.apiFunctions).sort()).toEqual(named((k) => k === 'http').sort());
    expect(lambdas(s.workers).sort()).toEqual(named((k) => k !== 'http').sort());
    expect(lambdas(s.api)).toEqual([]);
    expect(lambdas(s.monitoring)).toEqual([]);
    expect(Object.keys(s.functions).sort()).toEqual(manifestFunctions.map((f) => f.name).sort());
  });

  test('cross-stack references: imports of the stateful stack only, no new export; the order the names need is explicit', () => {
    for (const stack of stacksOf(s).filter((st) => st !== s.stateful)) {
      const template = Template.fromStack(stack).toJSON();
      const imports = [...JSON.stringify(template).matchAll(/"Fn::ImportValue":"([^"]+)"/g)].map((m) => m[1]!);
      for (const name of imports)
        expect([stack.stackName, name]).toEqual([stack.stackName, expect.stringMatching(/^ChatServiceStateful:/)]);
      expect([stack.stackName, Object.values(template.Outputs ?? {}).filter((o: any) => o.Export)]).toEqual([
        stack.stackName,
        [],
      ]);
    }
    // The API names its functions, the monitoring stack functions and API: neither imports them.
    expect(JSON.stringify(s.apiTemplate.toJSON())).not.toContain('Fn::ImportValue');
    const dependencies = (stack: Stack) => stack.dependencies.map((d) => d.stackName).sort();
    expect(dependencies(s.api)).toEqual(['ChatServiceApiFunctions']);
    expect(dependencies(s.monitoring)).toEqual([
      'ChatServiceApiFunctions',
      'ChatServiceStateful',
      'ChatServiceStateless',
      'ChatServiceWorkers',
    ]);
    expect(dependencies(s.apiFunctions)).toEqual(['ChatServiceStateful']);
    expect(dependencies(s.workers)).toEqual(['ChatServiceStateful']);
  });

  test('a serviceName too long for the function names it prefixes is refused, naming the longest', () => {
    const longest = Math.max(...manifestFunctions.map((f) => f.name.length));
    const read = (serviceName: string) => () =>
      readSettings((key) => ({ ...DEPLOY, serviceName })[key as keyof typeof DEPLOY | 'serviceName'], {});
    const fits = 'S'.repeat(MAX_FUNCTION_NAME_LENGTH - 1 - longest);
    expect(read(fits)).not.toThrow();
    expect(read(`${fits}S`)).toThrow(/serviceName: too long for the function names .* Lambda allows 64/);
  });
});

describe('functions', () => {
  test('one Lambda per manifest function, nodejs24.x on arm64 with the manifest timeout and memory', () => {
    expect(byType(functionResources, 'AWS::Lambda::Function')).toHaveLength(manifestFunctions.length);
    for (const fn of manifestFunctions) {
      const { props } = functionOf(fn);
      expect(props).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        Timeout: fn.timeoutSeconds,
        MemorySize: fn.memoryMb,
      });
      expect(props.Environment.Variables).toMatchObject({
        NODE_OPTIONS: '--enable-source-maps',
        PDF_ALLOW_LOOPBACK: 'false',
      });
      expect(props.Environment.Variables.TABLE_NAME).toBeDefined();
      expect(props.LoggingConfig.LogGroup).toBeDefined();
    }
  });

  test('the functions that copy a PDF to /tmp for the pdf.js child have room for the largest PDF; the others keep the default', () => {
    const copiesPdf = ['pdf-extract', 'pdf-ocr', 'get-pdf-page', 'get-file-part'];
    for (const fn of manifestFunctions) {
      const { props } = functionOf(fn);
      // The largest PDF (500 MB) on top of Lambda's default 512 MB.
      if (copiesPdf.includes(fn.name)) expect(props.EphemeralStorage.Size).toBeGreaterThanOrEqual(500 + 512);
      else expect(props.EphemeralStorage).toBeUndefined();
      expect(props.EphemeralStorage?.Size).toBe(fn.tmpMb);
    }
  });

  test('each function has its own log group with a retention', () => {
    for (const fn of manifestFunctions) {
      const group = functionResources[functionOf(fn).props.LoggingConfig.LogGroup.Ref]!;
      expect(group.Type).toBe('AWS::Logs::LogGroup');
      expect(group.Properties.RetentionInDays).toBe(30);
    }
  });

  test('queue URLs and secret ARNs are given to the functions whose access names them, and only those', () => {
    for (const fn of manifestFunctions) {
      const vars = functionOf(fn).props.Environment.Variables;
      for (const stage of pipelineStageList) {
        expect([stage.name, vars[queueUrlSetting[stage.name]] !== undefined]).toEqual([
          stage.name,
          (fn.access.sendTo ?? []).includes(stage.name),
        ]);
      }
      expect(vars.SERVICE_JWT_SECRET_ARN !== undefined).toBe(fn.access.jwtSecret === true);
      expect(vars.OPENAI_API_KEY_SECRET_ARN).toBeUndefined(); // no key secret configured here
      expect(vars.PAYMENTS_SECRET_ARN).toBeUndefined(); // no payments configured here: orders carry payment: null
    }
    expect(s.settings.warnings).toContain(
      'No paymentsSecret: the service takes no payments (orders carry payment: null)',
    );
  });
});

describe('least privilege', () => {
  test('no statement of any function has a wildcard action or a "*" resource', () => {
    const policies = byType(functionResources, 'AWS::IAM::Policy');
    expect(policies.length).toBeGreaterThanOrEqual(manifestFunctions.length);
    for (const [id, policy] of policies) {
      for (const st of policy.Properties.PolicyDocument.Statement) {
        for (const action of [st.Action].flat()) expect([id, action]).toEqual([id, expect.not.stringContaining('*')]);
        for (const resource of [st.Resource].flat()) expect([id, resource]).not.toEqual([id, '*']);
      }
    }
  });

  test('function roles carry no managed policies (no AWSLambdaBasicExecutionRole and its "*" logs rights)', () => {
    for (const fn of manifestFunctions) {
      const role = functionResources[lambdaId(s, fn.name, 'role')]!;
      expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    }
  });

  test('each function may do exactly what its manifest access says, on its own resources', () => {
    const consume = [
      'sqs:ReceiveMessage',
      'sqs:ChangeMessageVisibility',
      'sqs:GetQueueUrl',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
    ];
    for (const fn of manifestFunctions) {
      const { access } = fn;
      const expected = new Set(['logs:CreateLogStream', 'logs:PutLogEvents']);
      if (access.table === 'read' || access.table === 'readwrite') TABLE_READ_ACTIONS.forEach((a) => expected.add(a));
      if (access.table === 'write' || access.table === 'readwrite') TABLE_WRITE_ACTIONS.forEach((a) => expected.add(a));
      // A read-only function that takes API keys records their use (lastUsedAt on APIKEY# items, below).
      else if (access.apiKeys) expected.add('dynamodb:UpdateItem');
      if (access.bucket) BUCKET_LIST_ACTIONS.forEach((a) => expected.add(a));
      if (access.bucket?.read?.length) BUCKET_READ_ACTIONS.forEach((a) => expected.add(a));
      if (access.bucket?.write?.length) BUCKET_WRITE_ACTIONS.forEach((a) => expected.add(a));
      if (access.sendTo?.length || access.events) expected.add('sqs:SendMessage');
      if (access.jwtSecret) expected.add('secretsmanager:GetSecretValue');
      if (fn.kind === 'queue' || fn.kind === 'dlq') consume.forEach((a) => expected.add(a));

      const statements = statementsOf(fn);
      expect([fn.name, [...new Set(statements.flatMap((st) => st.actions))].sort()]).toEqual([
        fn.name,
        [...expected].sort(),
      ]);

      // Object rights on the declared prefixes only (bucket/<prefix>*); the bucket itself only for listing.
      const onPrefixes = (resources: unknown[]) =>
        resources.map((r) => /\/((?:[a-z]+\/)?)\*"\]\]\}$/.exec(JSON.stringify(r))?.[1] ?? 'the bucket').sort();
      const s3Statements = statements.filter((x) => x.actions.some((a) => a.startsWith('s3:')));
      const granted = (actions: string[]) =>
        s3Statements.filter((x) => x.actions.some((a) => actions.includes(a))).flatMap((x) => onPrefixes(x.resources));
      expect([fn.name, granted(BUCKET_READ_ACTIONS)]).toEqual([fn.name, [...(access.bucket?.read ?? [])].sort()]);
      expect([fn.name, granted(BUCKET_WRITE_ACTIONS)]).toEqual([fn.name, [...(access.bucket?.write ?? [])].sort()]);
      expect([fn.name, granted(BUCKET_LIST_ACTIONS)]).toEqual([fn.name, access.bucket ? ['the bucket'] : []]);
      // Sends go to the named stages' queues only, and to the webhook queue where access says `events`.
      const sends = statements.filter((x) => x.actions.includes('sqs:SendMessage')).flatMap((x) => x.resources);
      expect(sends).toHaveLength((access.sendTo?.length ?? 0) + (access.events ? 1 : 0));
      const toWebhookQueue = sends.filter((r) => JSON.stringify(r).includes('WebhookDeliveryQueue'));
      expect([fn.name, toWebhookQueue.length]).toEqual([fn.name, access.events ? 1 : 0]);
    }
  });

  test("a read-only function that takes API keys may update only an API key item's lastUsedAt", () => {
    const readOnly = manifestFunctions.filter((f) => f.access.apiKeys && f.access.table === 'read');
    expect(readOnly.map((f) => f.name)).toEqual(expect.arrayContaining(['get-me', 'list-chats', 'get-pdf-page']));
    for (const fn of readOnly) {
      const updates = roleStatements(s, fn.name).filter((st: any) =>
        [st.Action].flat().includes('dynamodb:UpdateItem'),
      );
      expect([fn.name, updates.map((st: any) => ({ Action: st.Action, Condition: st.Condition }))]).toEqual([
        fn.name,
        [
          {
            Action: 'dynamodb:UpdateItem',
            Condition: {
              'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['APIKEY#*'] },
              'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['PK', 'SK', 'lastUsedAt'] },
            },
          },
        ],
      ]);
    }
  });

  test('the collection routes touch the table only; POST /search reads vectors/, queries vector indexes and embeds, nothing more', () => {
    const collectionRoutes = manifestFunctions.filter((f) => f.name.includes('collection'));
    expect(collectionRoutes).toHaveLength(8);
    for (const fn of collectionRoutes) {
      const actions = [...new Set(statementsOf(fn).flatMap((st) => st.actions))];
      expect([fn.name, actions.filter((a) => !a.startsWith('dynamodb:') && !a.startsWith('logs:'))]).toEqual([
        fn.name,
        ['secretsmanager:GetSecretValue'],
      ]);
    }
    const search = manifestFunctions.find((f) => f.name === 'search-files')!;
    expect(search.access).toEqual({
      table: 'readwrite',
      bucket: { read: ['vectors/'] },
      jwtSecret: true,
      // Its passages go through the rerank stage (Bedrock's Rerank API with RERANK_PROVIDER=bedrock).
      ai: ['embeddings', 'rerank'],
      // With VECTOR_STORE=s3vectors it queries the user's index like a file chat's reply.
      vectors: ['query'],
      // It takes API keys (scope search).
      apiKeys: true,
    });
    const s3Actions = statementsOf(search)
      .flatMap((st) => st.actions)
      .filter((a) => a.startsWith('s3:'));
    expect(s3Actions.filter((a) => BUCKET_WRITE_ACTIONS.includes(a))).toEqual([]);
  });

  test('every object key the code makes lies under a prefix the manifest grants by (uploads/, work/, vectors/, exports/)', () => {
    const prefixes: BucketPrefix[] = ['uploads/', 'work/', 'vectors/', 'exports/'];
    const id = 'f'.padEnd(24, '1');
    const keyFunctions = Object.entries(storageKeys).filter(
      ([name, v]) => typeof v === 'function' && /(Key|Prefix)$/.test(name),
    );
    expect(keyFunctions.length).toBeGreaterThanOrEqual(9);
    for (const [name, make] of keyFunctions) {
      const key = (make as (...a: unknown[]) => string)(id, id, 1);
      expect([name, prefixes.some((p) => key.startsWith(p))]).toEqual([name, true]);
    }
  });

  test('table reads reach the table and its indexes by name, not index/*', () => {
    const reader = manifestFunctions.find((f) => f.access.table)!;
    const queryResources = statementsOf(reader)
      .filter((st) => st.actions.includes('dynamodb:Query'))
      .flatMap((st) => st.resources)
      .map((r) => JSON.stringify(r));
    for (const g of tableDefinition.globalSecondaryIndexes)
      expect(queryResources.some((r) => r.includes(`/index/${g.indexName}"`))).toBe(true);
    expect(queryResources.some((r) => r.includes('/index/*'))).toBe(false);
  });
});

describe('metrics and dashboard', () => {
  test('every function writes its metrics under the namespace the dashboard and alarms read', () => {
    expect(s.monitoring.metricsNamespace).toBe(s.settings.serviceName);
    for (const fn of manifestFunctions) {
      expect([fn.name, functionOf(fn).props.Environment.Variables.POWERTOOLS_METRICS_NAMESPACE]).toEqual([
        fn.name,
        s.monitoring.metricsNamespace,
      ]);
    }
  });

  test("the dashboard shows every metric of shared/observability/metrics.ts, the API's and its URL is an output", () => {
    const dashboards = byType(monitoringResources, 'AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    const body = JSON.stringify(monitoringResources[dashboards[0]![0]]!.Properties.DashboardBody);
    for (const name of Object.values(METRIC)) {
      if (name === METRIC.requests) continue; // the API's own Count is shown
      expect([name, body.includes(name)]).toEqual([name, true]);
    }
    expect(body).toContain(`SEARCH('{${s.monitoring.metricsNamespace},service,route}`);
    expect(body).toContain('AWS/ApiGateway');
    // The API by its name (the monitoring stack names it, as the API stack does).
    expect(body).toContain(`ApiName\\",\\"${s.api.api.restApiName}\\"`);
    s.monitoringTemplate.hasOutput('DashboardUrl', {});
  });

  test('one widget shows the ratings of replies: up, down and removed, summed', () => {
    const [id] = byType(monitoringResources, 'AWS::CloudWatch::Dashboard')[0]!;
    const dashboardBody = monitoringResources[id]!.Properties.DashboardBody;
    // The body is a Fn::Join of text and tokens (the region, the namespace): the tokens as placeholders.
    const text =
      typeof dashboardBody === 'string'
        ? dashboardBody
        : (dashboardBody['Fn::Join'][1] as unknown[]).map((p) => (typeof p === 'string' ? p : 'TOKEN')).join('');
    const widgets = JSON.parse(text).widgets as { properties: { title?: string; metrics?: unknown[][] } }[];
    const feedback = widgets.filter((w) => w.properties.title?.startsWith('Feedback on replies'));
    expect(feedback).toHaveLength(1);
    const series = feedback[0]!.properties.metrics!.map((m) => [m[1], (m.at(-1) as { stat: string }).stat]);
    expect(series).toEqual([METRIC.feedbackUp, METRIC.feedbackDown, METRIC.feedbackRemoved].map((n) => [n, 'Sum']));
  });
});

describe('tracing, a per-deployment switch', () => {
  const stage = (t: Template) => Object.values(t.findResources('AWS::ApiGateway::Stage'))[0]!.Properties;

  test('off by default: no active tracing, no tracer in the functions, none on the stage', () => {
    for (const fn of manifestFunctions) {
      const { props } = functionOf(fn);
      expect([fn.name, props.TracingConfig, props.Environment.Variables.POWERTOOLS_TRACE_ENABLED]).toEqual([
        fn.name,
        undefined,
        undefined,
      ]);
    }
    expect(stage(s.apiTemplate).TracingEnabled).toBeFalsy();
  });

  test('on (-c tracing=true): active tracing and the tracer in every function, X-Ray on the stage, the X-Ray rights on "*" only', () => {
    const traced = synth({ tracing: 'true' });
    const resources = traced.functionResources;
    for (const fn of manifestFunctions) {
      const props = resources[lambdaId(traced, fn.name)]!.Properties;
      expect([fn.name, props.TracingConfig, props.Environment.Variables.POWERTOOLS_TRACE_ENABLED]).toEqual([
        fn.name,
        { Mode: 'Active' },
        'true',
      ]);
    }
    expect(stage(traced.apiTemplate).TracingEnabled).toBe(true);
    for (const [id, policy] of byType(resources, 'AWS::IAM::Policy')) {
      for (const st of policy.Properties.PolicyDocument.Statement) {
        if ([st.Resource].flat().includes('*'))
          expect([id, [st.Action].flat().sort()]).toEqual([id, ['xray:PutTelemetryRecords', 'xray:PutTraceSegments']]);
      }
    }
  });
});

describe('REST API', () => {
  test('stage `api` with throttling and JSON access logs; every route under the /v1 root resource', () => {
    s.apiTemplate.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: API_STAGE,
      MethodSettings: Match.arrayWith([
        Match.objectLike({ HttpMethod: '*', ResourcePath: '/*', ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 }),
      ]),
      AccessLogSetting: {
        DestinationArn: Match.anyValue(),
        Format: Match.stringLikeRegexp('^\\{"requestId":"\\$context.requestId"'),
      },
    });
    const format = byType(apiResources, 'AWS::ApiGateway::Stage')[0]![1].Properties.AccessLogSetting.Format;
    expect(() => JSON.parse(format)).not.toThrow();

    const resources = byType(apiResources, 'AWS::ApiGateway::Resource');
    const v1 = resources.filter(([, r]) => r.Properties.ParentId['Fn::GetAtt']?.[1] === 'RootResourceId');
    expect(v1.map(([, r]) => r.Properties.PathPart)).toEqual(['v1']);
  });

  test('every manifest route is a method at /v1<path>, integrated with its own function by name, which it alone may invoke', () => {
    const resources = apiResources;
    const pathOf = (id: string): string => {
      const r = resources[id]!;
      const parent = r.Properties.ParentId;
      return `${parent.Ref ? pathOf(parent.Ref) : ''}/${r.Properties.PathPart}`;
    };
    const methods = byType(resources, 'AWS::ApiGateway::Method').filter(
      ([, m]) => m.Properties.HttpMethod !== 'OPTIONS' && m.Properties.Integration.Type !== 'MOCK',
    );
    expect(methods).toHaveLength(httpRouteList.length);
    const permissions = byType(resources, 'AWS::Lambda::Permission');
    expect(permissions).toHaveLength(httpRouteList.length);
    for (const route of httpRouteList) {
      const name = functionOf(manifestFunctions.find((f) => f.name === route.name)!).props.FunctionName;
      expect(name).toBe(serviceFunctionName(s.settings.serviceName, route.name));
      const match = methods.filter(
        ([, m]) =>
          m.Properties.HttpMethod === route.method &&
          m.Properties.ResourceId.Ref &&
          pathOf(m.Properties.ResourceId.Ref) === `/v1${route.path}`,
      );
      expect([route.name, match.length]).toEqual([route.name, 1]);
      expect([route.name, invokedName(match[0]![1])]).toEqual([route.name, name]);
      // The permission names the function and this method (its source ARN: method and path).
      const granted = permissions.filter(([, p]) =>
        JSON.stringify(p.Properties.FunctionName).endsWith(`:function:${name}"]]}`),
      );
      expect([route.name, granted.length]).toEqual([route.name, 1]);
      expect(granted[0]![1].Properties).toMatchObject({
        Action: 'lambda:InvokeFunction',
        Principal: 'apigateway.amazonaws.com',
      });
      expect(JSON.stringify(granted[0]![1].Properties.SourceArn)).toContain(`/${route.method}/v1`);
    }
  });

  test("the gateway's own answers (GET and DELETE /mcp: 405, Allow: POST) are mock integrations: no function, the body the local gateway sends", () => {
    const pathOf = (id: string): string => {
      const r = apiResources[id]!;
      const parent = r.Properties.ParentId;
      return `${parent.Ref ? pathOf(parent.Ref) : ''}/${r.Properties.PathPart}`;
    };
    const mocks = byType(apiResources, 'AWS::ApiGateway::Method').filter(
      ([, m]) => m.Properties.HttpMethod !== 'OPTIONS' && m.Properties.Integration.Type === 'MOCK',
    );
    expect(mocks.map(([, m]) => `${m.Properties.HttpMethod} ${pathOf(m.Properties.ResourceId.Ref)}`).sort()).toEqual(
      gatewayMethods.map((g) => `${g.method} /v1${g.path}`).sort(),
    );
    for (const g of gatewayMethods) {
      const [, method] = mocks.find(
        ([, m]) => m.Properties.HttpMethod === g.method && pathOf(m.Properties.ResourceId.Ref) === `/v1${g.path}`,
      )!;
      expect(method.Properties.Integration.IntegrationResponses).toEqual([
        {
          StatusCode: '405',
          ResponseParameters: {
            'method.response.header.Allow': `'${g.allow}'`,
            'method.response.header.Access-Control-Allow-Origin': `'${ORIGIN}'`,
          },
          ResponseTemplates: { 'application/json': gatewayMethodBody(g) },
        },
      ]);
      expect(method.Properties.MethodResponses).toEqual([expect.objectContaining({ StatusCode: '405' })]);
    }
  });

  test('the public routes (GET /shared/{shareId}, the payment webhook) have no authorizer and a throttle of their own; no method has an authorizer', () => {
    const methods = byType(apiResources, 'AWS::ApiGateway::Method');
    expect(methods.filter(([, m]) => (m.Properties.AuthorizationType ?? 'NONE') !== 'NONE')).toEqual([]);
    expect(byType(apiResources, 'AWS::ApiGateway::Authorizer')).toEqual([]);
    const publicRoutes = httpRouteList.filter((r) => r.auth === 'public');
    expect(publicRoutes.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /shared/{shareId}',
      'POST /payments/webhook',
    ]);
    const settings = byType(apiResources, 'AWS::ApiGateway::Stage')[0]![1].Properties.MethodSettings;
    for (const [method, path] of [
      ['GET', '/~1v1~1shared~1{shareId}'],
      ['POST', '/~1v1~1payments~1webhook'],
    ]) {
      expect(settings).toContainEqual(
        expect.objectContaining({
          HttpMethod: method,
          ResourcePath: path,
          ThrottlingRateLimit: 10,
          ThrottlingBurstLimit: 20,
        }),
      );
    }
  });

  test('the payment webhook has an alarm of its own on refused deliveries (4xx), to the alarm topic', () => {
    const alarm = byType(monitoringResources, 'AWS::CloudWatch::Alarm').find(([id]) =>
      id.startsWith('PaymentWebhookRefusedAlarm'),
    )?.[1];
    expect(alarm?.Properties).toMatchObject({
      MetricName: 'ClientErrors',
      Dimensions: expect.arrayContaining([{ Name: 'route', Value: 'POST /payments/webhook' }]),
      Statistic: 'Sum',
      Threshold: 1,
    });
    expect(alarm!.Properties.AlarmActions).toHaveLength(1);
  });

  test('streaming routes use the STREAM transfer mode and a timeout as long as their function', () => {
    const streaming = httpRouteList.filter((r) => r.streaming);
    expect(streaming.map((r) => r.path)).toContain('/message/logged-in');
    for (const route of httpRouteList) {
      const name = serviceFunctionName(s.settings.serviceName, route.name);
      const [, method] = byType(apiResources, 'AWS::ApiGateway::Method').find(
        ([, m]) => m.Properties.HttpMethod === route.method && invokedName(m) === name,
      )!;
      const integration = method.Properties.Integration;
      if (route.streaming) {
        const timeout = functionOf(manifestFunctions.find((f) => f.name === route.name)!).props.Timeout;
        expect(integration).toMatchObject({
          Type: 'AWS_PROXY',
          ResponseTransferMode: 'STREAM',
          TimeoutInMillis: timeout * 1000,
        });
        expect(integration.TimeoutInMillis).toBeGreaterThan(MAX_BUFFERED_INTEGRATION_SECONDS * 1000);
        expect(JSON.stringify(integration.Uri)).toContain('/response-streaming-invocations');
      } else {
        expect(integration.ResponseTransferMode).toBeUndefined();
        expect(JSON.stringify(integration.Uri)).toContain('/invocations');
      }
    }
  });

  test('CORS preflight on the resources, and the API URL output ends in /api/v1', () => {
    const options = byType(apiResources, 'AWS::ApiGateway::Method').filter(
      ([, m]) => m.Properties.HttpMethod === 'OPTIONS',
    );
    expect(options.length).toBeGreaterThan(httpRouteList.length / 2);
    const outputs = s.apiTemplate.toJSON().Outputs;
    const url = JSON.stringify(outputs.ApiUrl.Value);
    expect(url).toMatch(/\/v1"\]\]\}$/);
    // The stage ref supplies "api" in the middle.
    expect(url).toContain('ApiDeploymentStageapi');
  });

  test('two routes naming a path variable differently at one position are refused at synth', () => {
    const api = new apigateway.RestApi(new Stack(new App(), 'S'), 'X');
    const root = api.root.addResource('v1');
    resourceFor(root, '/chat/{chatId}').addMethod('GET');
    expect(() => resourceFor(root, '/chat/{id}/messages')).toThrow(/\{id\}.*\{chatId\}/);
  });
});

describe('queues', () => {
  test('each stage: a queue with a DLQ, the manifest receive count, and 6 × its consumer timeout of visibility', () => {
    const exports = exportedIds(s.statefulTemplate);
    const mappings = byType(functionResources, 'AWS::Lambda::EventSourceMapping');
    // The stages', the DLQ consumers' and the webhook deliveries' (webhook queue test below).
    expect(mappings).toHaveLength(pipelineStageList.length * (1 + deadLetterConsumerList.length) + 1);
    for (const stage of pipelineStageList) {
      const fnId = lambdaId(s, stage.name);
      const [, mapping] = mappings.find(([, m]) => m.Properties.FunctionName.Ref === fnId)!;
      expect(mapping.Properties).toMatchObject({
        BatchSize: stage.batchSize,
        ScalingConfig: { MaximumConcurrency: stage.maxConcurrency },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
      const queueId = exports.get(mapping.Properties.EventSourceArn['Fn::ImportValue'])!;
      expect(queueId).toBe(logicalId(s.stateful, s.stateful.queues[stage.name].queue));
      const queue = statefulResources[queueId]!.Properties;
      const consumerTimeout = functionResources[fnId]!.Properties.Timeout;
      expect(queue.VisibilityTimeout).toBeGreaterThanOrEqual(VISIBILITY_TIMEOUT_FACTOR * consumerTimeout);
      expect(queue.RedrivePolicy.maxReceiveCount).toBe(stage.maxReceiveCount);
      expect(stage.maxReceiveCount).toBe(5);
      const dlqId = queue.RedrivePolicy.deadLetterTargetArn['Fn::GetAtt'][0];
      expect(statefulResources[dlqId]).toMatchObject({
        Type: 'AWS::SQS::Queue',
        Properties: { MessageRetentionPeriod: 14 * 24 * 3600 },
      });
    }
    // Each stage's queue and DLQ, and the webhook queue's.
    expect(byType(statefulResources, 'AWS::SQS::Queue')).toHaveLength(2 * pipelineStageList.length + 2);
  });

  test("each stage's DLQ feeds the dead-letter consumer (partial batch responses), which may write the table and release the owner's waiting ingestions", () => {
    const exports = exportedIds(s.statefulTemplate);
    const mappings = byType(functionResources, 'AWS::Lambda::EventSourceMapping');
    expect(deadLetterConsumerList.map((c) => c.name)).toEqual(['pdf-dead-letter']);
    for (const consumer of deadLetterConsumerList) {
      const fnId = lambdaId(s, consumer.name);
      const sources = mappings
        .filter(([, m]) => m.Properties.FunctionName.Ref === fnId)
        .map(([, m]) => {
          expect(m.Properties).toMatchObject({
            BatchSize: consumer.batchSize,
            FunctionResponseTypes: ['ReportBatchItemFailures'],
          });
          return exports.get(m.Properties.EventSourceArn['Fn::ImportValue']);
        });
      expect(sources.sort()).toEqual(
        pipelineStageList.map((stage) => logicalId(s.stateful, s.stateful.queues[stage.name].dlq)).sort(),
      );
      expect(consumer.access).toEqual({ table: 'readwrite', sendTo: ['pdf-fetch'], events: true });
    }
  });

  test('the webhook queue feeds the delivery function (partial batch responses), with a DLQ and 6 × its timeout of visibility', () => {
    const exports = exportedIds(s.statefulTemplate);
    const fnId = lambdaId(s, webhookDelivery.name);
    const mappings = byType(functionResources, 'AWS::Lambda::EventSourceMapping').filter(
      ([, m]) => m.Properties.FunctionName.Ref === fnId,
    );
    expect(mappings).toHaveLength(1);
    const [, mapping] = mappings[0]!;
    expect(mapping.Properties).toMatchObject({
      BatchSize: webhookDelivery.batchSize,
      ScalingConfig: { MaximumConcurrency: webhookDelivery.maxConcurrency },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    const queueId = exports.get(mapping.Properties.EventSourceArn['Fn::ImportValue'])!;
    expect(queueId).toBe(logicalId(s.stateful, s.stateful.webhookQueue.queue));
    const queue = statefulResources[queueId]!.Properties;
    expect(queue.VisibilityTimeout).toBeGreaterThanOrEqual(
      VISIBILITY_TIMEOUT_FACTOR * functionResources[fnId]!.Properties.Timeout,
    );
    expect(queue.RedrivePolicy.maxReceiveCount).toBe(webhookDelivery.maxReceiveCount);
    expect(JSON.stringify(queue.RedrivePolicy.deadLetterTargetArn)).toContain(
      logicalId(s.stateful, s.stateful.webhookQueue.dlq),
    );
    // Deployed, no receiver on loopback.
    expect(functionResources[fnId]!.Properties.Environment.Variables.WEBHOOK_ALLOW_LOOPBACK).toBe('false');
  });
});

describe('stateful resources', () => {
  test('the table: on demand, point-in-time recovery, deletion protection, keys from infra/table.ts', () => {
    s.statefulTemplate.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      DeletionProtectionEnabled: true,
      KeySchema: [
        { AttributeName: tableDefinition.partitionKey, KeyType: 'HASH' },
        { AttributeName: tableDefinition.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: tableDefinition.globalSecondaryIndexes.map((g) =>
        Match.objectLike({ IndexName: g.indexName, Projection: { ProjectionType: 'ALL' } }),
      ),
    });
    s.statefulTemplate.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain' });
  });

  test('deletion protection and retention follow the context', () => {
    const t = synth({ deletionProtection: 'false', retainData: false });
    t.statefulTemplate.hasResourceProperties('AWS::DynamoDB::Table', { DeletionProtectionEnabled: false });
    t.statefulTemplate.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' });
  });

  test('the bucket: public access blocked, encrypted, TLS only, uploads and exports expire, CORS for presigned URLs', () => {
    s.statefulTemplate.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' }),
          Match.objectLike({ Prefix: UPLOADS_PREFIX, ExpirationInDays: 7, Status: 'Enabled' }),
          Match.objectLike({ Prefix: 'exports/', ExpirationInDays: 1, Status: 'Enabled' }),
          Match.objectLike({ Prefix: WORK_PREFIX, ExpirationInDays: 14, Status: 'Enabled' }),
        ]),
      },
      CorsConfiguration: { CorsRules: [Match.objectLike({ AllowedMethods: Match.arrayWith(['PUT', 'GET']) })] },
    });
    s.statefulTemplate.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  test("the lifecycle prefixes match the pipeline's key layout, and never touch the kept vectors", () => {
    const [id, run] = ['f'.padEnd(24, '1'), 'r'.padEnd(24, '2')];
    expect(uploadKey('u'.padEnd(24, '3'), id).startsWith(UPLOADS_PREFIX)).toBe(true);
    expect(sourceKey(id, run).startsWith(WORK_PREFIX)).toBe(true);
    const kept = vectorsKey(id, run);
    expect(kept.startsWith(UPLOADS_PREFIX) || kept.startsWith(WORK_PREFIX)).toBe(false);
  });

  test('DynamoDB TTL collects items by expiresAt; without RETENTION_DAYS no rule touches the kept vectors', () => {
    s.statefulTemplate.hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    });
    const rules = Object.values(s.statefulTemplate.findResources('AWS::S3::Bucket')).flatMap(
      (b) => b.Properties.LifecycleConfiguration?.Rules ?? [],
    );
    expect(rules.some((r: { Prefix?: string }) => r.Prefix === VECTORS_PREFIX)).toBe(false);
  });

  test('RETENTION_DAYS adds lifecycle rules a day after the sweep is due: uploads (if sooner) and vectors', () => {
    const t = synth({ RETENTION_DAYS: '3' });
    t.statefulTemplate.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({ Prefix: UPLOADS_PREFIX, ExpirationInDays: 4, Status: 'Enabled' }),
          Match.objectLike({ Prefix: VECTORS_PREFIX, ExpirationInDays: 4, Status: 'Enabled' }),
        ]),
      },
    });
    for (const stack of [t.apiFunctions, t.workers]) {
      Template.fromStack(stack).allResourcesProperties('AWS::Lambda::Function', {
        Environment: { Variables: Match.objectLike({ RETENTION_DAYS: '3' }) },
      });
    }
  });

  test('the data sweep runs on a schedule (erasures left unfinished, retention)', () => {
    const sweep = scheduledTaskList.find((t) => t.name === 'data-sweep')!;
    Template.fromStack(s.workers).hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: `rate(${sweep.everyMinutes} minutes)`,
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^DataSweep'), 'Arn'] } })],
    });
  });

  test('the service JWT secret is generated in Secrets Manager', () => {
    s.statefulTemplate.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: Match.objectLike({ PasswordLength: 64, ExcludePunctuation: true }),
    });
  });
});

describe('alarms', () => {
  test('DLQ messages received > 0 for each stage, API 5xx, and errors of each function, all notifying the alarm topic', () => {
    const topicId = logicalId(s.stateful, s.stateful.alarmTopic);
    const dlqAlarms = byType(statefulResources, 'AWS::CloudWatch::Alarm');
    // Each stage's DLQ, and the webhook queue's.
    expect(dlqAlarms).toHaveLength(pipelineStageList.length + 1);
    for (const stage of pipelineStageList) {
      const dlqId = logicalId(s.stateful, s.stateful.queues[stage.name].dlq);
      const alarm = dlqAlarms.find(([, a]) => JSON.stringify(a.Properties.Dimensions).includes(dlqId));
      expect(alarm?.[1].Properties).toMatchObject({
        MetricName: 'NumberOfMessagesReceived',
        Statistic: 'Sum',
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        AlarmActions: [{ Ref: topicId }],
      });
    }

    // The other alarms, in the monitoring stack, name what they watch (functions and API by name).
    const alarms = byType(monitoringResources, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    expect(alarms).toHaveLength(manifestFunctions.length + 2);
    expect(
      alarms.filter(
        (a) =>
          a.MetricName === '5XXError' &&
          a.Namespace === 'AWS/ApiGateway' &&
          JSON.stringify(a.Dimensions) === JSON.stringify([{ Name: 'ApiName', Value: s.api.api.restApiName }]),
      ),
    ).toHaveLength(1);
    for (const fn of manifestFunctions) {
      const name = functionOf(fn).props.FunctionName;
      const errors = alarms.filter(
        (a) =>
          a.Namespace === 'AWS/Lambda' &&
          a.MetricName === 'Errors' &&
          JSON.stringify(a.Dimensions) === JSON.stringify([{ Name: 'FunctionName', Value: name }]),
      );
      expect([fn.name, errors.length]).toEqual([fn.name, 1]);
      expect(errors[0]).toMatchObject({ Statistic: 'Sum', Period: 300, Threshold: 1 });
    }
    const topicImport = { 'Fn::ImportValue': expect.stringMatching(/^ChatServiceStateful:ExportsOutputRefAlarms/) };
    for (const a of alarms) expect(a.AlarmActions).toEqual([topicImport]);
  });
});

describe('settings', () => {
  test('function settings come from context (over the environment) and the OpenAI key from a named secret', () => {
    const t = synth(
      {
        ADMIN_EMAILS: 'boss@example.com',
        IDP_PRESET: 'firebase',
        FIREBASE_PROJECT_ID: 'my-project',
        openAiKeySecret: 'prod/openai',
        paymentsSecret: 'prod/payments',
      },
      {
        ADMIN_EMAILS: 'ignored@example.com',
        OPENAI_CHAT_MODEL: 'gpt-4.1-mini',
        OPENAI_API_KEY: 'sk-never-in-a-template',
      },
    );
    expect(t.settings.warnings).toEqual([]);
    expectEveryEnvironment(
      t,
      { ADMIN_EMAILS: 'boss@example.com', IDP_PRESET: 'firebase', OPENAI_CHAT_MODEL: 'gpt-4.1-mini' },
      ['OPENAI_API_KEY'],
    );
    for (const fn of manifestFunctions)
      expect(envOf(t, fn.name).OPENAI_API_KEY_SECRET_ARN !== undefined).toBe((fn.access.ai ?? []).length > 0);
    const readers = manifestFunctions.filter((f) => f.access.ai?.length);
    expect(readers.length).toBeGreaterThan(0);
    expect(t.statelessJson).toContain(':secret:prod/openai-??????');
  });

  test('-c paymentsSecret: the keys secret is given, and readable, only to the functions that take payments', () => {
    const t = synth({ paymentsSecret: 'prod/payments' }, { PAYMENTS_SECRET_KEY: 'sk_live_never_in_a_template' });
    expect(t.settings.warnings.join('\n')).not.toMatch(/paymentsSecret/);
    expect(t.statelessJson).not.toContain('sk_live_never_in_a_template');
    const readsPaymentsSecret = (fn: ManifestFunction) => {
      return roleStatements(t, fn.name).some((st: any) =>
        JSON.stringify(st.Resource).includes(':secret:prod/payments-??????'),
      );
    };
    const takers = manifestFunctions.filter((fn) => fn.access.payments).map((fn) => fn.name);
    expect(takers.sort()).toEqual(['create-order', 'payment-webhook', 'update-order']);
    for (const fn of manifestFunctions) {
      const vars = envOf(t, fn.name);
      const takes = takers.includes(fn.name);
      expect([fn.name, vars.PAYMENTS_SECRET_ARN !== undefined, readsPaymentsSecret(fn)]).toEqual([
        fn.name,
        takes,
        takes,
      ]);
      expect(vars.PAYMENTS_SECRET_KEY).toBeUndefined();
    }
  });

  test('-c AI_PROVIDER=bedrock: invoke rights on exactly the configured models, to exactly the functions that call them, and no OpenAI secret', () => {
    const t = synth(
      {
        AI_PROVIDER: 'bedrock',
        BEDROCK_CHAT_MODEL: 'anthropic.claude-3-haiku-20240307-v1:0',
        BEDROCK_REGION: 'eu-central-1',
        openAiKeySecret: 'prod/openai',
      },
      { OPENAI_API_KEY: 'sk-never-in-a-template' },
    );
    expect(t.settings.aiProvider).toBe('bedrock');
    expect(t.settings.warnings).toContain(
      'AI_PROVIDER=bedrock: openAiKeySecret is ignored (no function is given the OpenAI key)',
    );
    expect(t.statelessJson).not.toContain('secret:prod/openai');
    // ARNs in the stack's partition (aws, aws-cn, aws-us-gov).
    const arn = (rest: string) => ({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, rest]] });
    const chatArn = arn(':bedrock:eu-central-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0');
    const embedArn = arn(':bedrock:eu-central-1::foundation-model/amazon.titan-embed-text-v2:0');
    const bedrockStatements = (fn: ManifestFunction) => roleStatements(t, fn.name).filter(grantsBedrock);
    expectEveryEnvironment(
      t,
      {
        AI_PROVIDER: 'bedrock',
        BEDROCK_CHAT_MODEL: 'anthropic.claude-3-haiku-20240307-v1:0',
        BEDROCK_REGION: 'eu-central-1',
      },
      ['OPENAI_API_KEY_SECRET_ARN', 'OPENAI_API_KEY'],
    );
    for (const fn of manifestFunctions) {
      const uses = fn.access.ai ?? [];
      const expected = [
        ...(uses.includes('chat') ? [chatArn] : []),
        ...(uses.includes('embeddings') ? [embedArn] : []),
      ];
      const statements = bedrockStatements(fn);
      if (!expected.length) {
        expect([fn.name, statements]).toEqual([fn.name, []]);
        continue;
      }
      expect([fn.name, statements]).toEqual([
        fn.name,
        [
          {
            Effect: 'Allow',
            Action: ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'],
            Resource: expected.length === 1 ? expected[0] : expected,
          },
        ],
      ]);
    }
    // The manifest says who calls what: the reply routes (the OpenAI-compatible one too) chat and
    // embed the prompt, pdf-embed, pdf-extract (the parts it embeds itself) and POST /search embed,
    // the MCP server's `ask` and `search` do both.
    expect(
      manifestFunctions
        .filter((f) => f.access.ai?.includes('chat'))
        .map((f) => f.name)
        .sort(),
    ).toEqual(['mcp', 'openai-chat-completions', 'regenerate-reply', 'send-message']);
    expect(
      manifestFunctions
        .filter((f) => f.access.ai?.includes('embeddings'))
        .map((f) => f.name)
        .sort(),
    ).toEqual([
      'mcp',
      'openai-chat-completions',
      'pdf-embed',
      'pdf-extract',
      'regenerate-reply',
      'search-files',
      'send-message',
    ]);
  });

  test('a Bedrock inference profile: the profile in this account and region, and its model anywhere but only through the profile', () => {
    const t = synth({
      AI_PROVIDER: 'bedrock',
      BEDROCK_CHAT_MODEL: 'us.anthropic.claude-3-5-haiku-20241022-v1:0',
      BEDROCK_REGION: 'us-west-2',
    });
    const send = manifestFunctions.find((f) => f.name === 'send-message')!;
    const statements = roleStatements(t, send.name).filter(grantsBedrock);
    const profileArn = {
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':bedrock:us-west-2:',
          { Ref: 'AWS::AccountId' },
          ':inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0',
        ],
      ],
    };
    expect(statements).toEqual([
      {
        Effect: 'Allow',
        Action: ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'],
        Resource: [
          profileArn,
          {
            'Fn::Join': [
              '',
              ['arn:', { Ref: 'AWS::Partition' }, ':bedrock:us-west-2::foundation-model/amazon.titan-embed-text-v2:0'],
            ],
          },
        ],
      },
      {
        Effect: 'Allow',
        Action: ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'],
        Resource: {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':bedrock:*::foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0',
            ],
          ],
        },
        Condition: { StringEquals: { 'bedrock:InferenceProfileArn': profileArn } },
      },
    ]);
  });

  test('-c RERANK_PROVIDER=bedrock: bedrock:Rerank and InvokeModel on the one reranking model, to exactly the functions that retrieve', () => {
    const t = synth({
      RERANK_PROVIDER: 'bedrock',
      BEDROCK_RERANK_MODEL: 'cohere.rerank-v3-5:0',
      BEDROCK_REGION: 'us-west-2',
    });
    const bedrockStatements = (fn: ManifestFunction) => roleStatements(t, fn.name).filter(grantsBedrock);
    const rerankers = manifestFunctions.filter((f) => f.access.ai?.includes('rerank')).map((f) => f.name);
    expect(rerankers.sort()).toEqual(['regenerate-reply', 'search-files', 'send-message']);
    for (const fn of manifestFunctions) {
      const vars = envOf(t, fn.name);
      expect(vars).toMatchObject({ RERANK_PROVIDER: 'bedrock', BEDROCK_RERANK_MODEL: 'cohere.rerank-v3-5:0' });
      // The AI provider stays the offline one: the reranker's are the only Bedrock rights.
      expect([fn.name, bedrockStatements(fn)]).toEqual([
        fn.name,
        rerankers.includes(fn.name)
          ? [
              { Effect: 'Allow', Action: 'bedrock:Rerank', Resource: '*' },
              {
                Effect: 'Allow',
                Action: 'bedrock:InvokeModel',
                Resource: {
                  'Fn::Join': [
                    '',
                    ['arn:', { Ref: 'AWS::Partition' }, ':bedrock:us-west-2::foundation-model/cohere.rerank-v3-5:0'],
                  ],
                },
              },
            ]
          : [],
      ]);
    }
    // Without it, no function may rerank through Bedrock.
    const offline = synth({});
    const offlineStatements = byType(offline.functionResources, 'AWS::IAM::Policy')
      .flatMap(([, p]) => p.Properties.PolicyDocument.Statement)
      .filter((st: any) => [st.Action].flat().some((a: string) => a.startsWith('bedrock:')));
    expect(offlineStatements).toEqual([]);
  });

  test('a bad setting fails the synth naming the variable; a local-only identity provider is refused', () => {
    expect(() => synth({ PDF_MAX_BYTES: 'lots' })).toThrow(/PDF_MAX_BYTES/);
    expect(() => synth({ logRetentionDays: 17 })).toThrow(/logRetentionDays/);
    expect(() => synth({ IDP_PRESET: 'local' })).toThrow(/IDP_PRESET=local/);
  });
});

describe('safe deploy defaults', () => {
  test('without an identity provider the synth is refused, naming what to set', () => {
    expect(() => synth({}, {}, { CORS_ALLOW_ORIGIN: ORIGIN })).toThrow(/identity provider.*IDP_PRESET/s);
    expect(() => synth({ IDP_PRESET: 'cognito' }, {}, { CORS_ALLOW_ORIGIN: ORIGIN })).toThrow(/COGNITO_USER_POOL_ID/);
  });

  test('without an explicit CORS origin the synth is refused; a URL that is not an origin too', () => {
    const idp = { IDP_PRESET: 'firebase', FIREBASE_PROJECT_ID: 'my-project' };
    expect(() => synth({}, {}, idp)).toThrow(/CORS_ALLOW_ORIGIN must be set/);
    expect(() => synth({ CORS_ALLOW_ORIGIN: 'https://app.example.com/path' }, {}, idp)).toThrow(
      /CORS_ALLOW_ORIGIN: must be an origin/,
    );
    expect(() => synth({ CORS_ALLOW_ORIGIN: 'app.example.com' }, {}, idp)).toThrow(/CORS_ALLOW_ORIGIN/);
    // From the synth's environment is explicit too.
    expect(synth({}, { CORS_ALLOW_ORIGIN: 'https://env.example.com' }, idp).settings.corsAllowOrigin).toBe(
      'https://env.example.com',
    );
  });

  test('every missing or bad setting is named in one failure, with how to pass it', () => {
    let failure: unknown;
    try {
      synth({ IDP_PRESET: 'cognito', logRetentionDays: 17 }, {}, {});
    } catch (err) {
      failure = err;
    }
    expect(failure).toBeInstanceOf(SettingsError);
    expect((failure as SettingsError).problems).toEqual([
      expect.stringMatching(/^logRetentionDays: /),
      expect.stringMatching(/COGNITO_USER_POOL_ID is required/),
      expect.stringMatching(/^CORS_ALLOW_ORIGIN must be set/),
    ]);
    expect((failure as Error).message).toContain('npm run synth -- -c KEY=value');
  });

  test('an explicit * is allowed, with a warning', () => {
    expect(synth({ CORS_ALLOW_ORIGIN: '*' }).settings.warnings.join('\n')).toMatch(/CORS_ALLOW_ORIGIN=\*/);
  });

  test('the origin is the only one anywhere: preflights, gateway responses, the bucket rule, every function', () => {
    expect(s.statelessJson).not.toContain(`"'*'"`);
    const preflights = byType(apiResources, 'AWS::ApiGateway::Method').filter(
      ([, m]) => m.Properties.HttpMethod === 'OPTIONS',
    );
    expect(preflights.length).toBeGreaterThan(0);
    for (const [, m] of preflights) {
      expect(
        m.Properties.Integration.IntegrationResponses[0].ResponseParameters[
          'method.response.header.Access-Control-Allow-Origin'
        ],
      ).toBe(`'${ORIGIN}'`);
    }
    const responses = byType(apiResources, 'AWS::ApiGateway::GatewayResponse');
    expect(responses.length).toBeGreaterThan(0);
    for (const [, r] of responses)
      expect(r.Properties.ResponseParameters['gatewayresponse.header.Access-Control-Allow-Origin']).toBe(`'${ORIGIN}'`);
    s.statefulTemplate.hasResourceProperties('AWS::S3::Bucket', {
      CorsConfiguration: { CorsRules: [Match.objectLike({ AllowedOrigins: [ORIGIN] })] },
    });
    for (const fn of manifestFunctions)
      expect(functionOf(fn).props.Environment.Variables.CORS_ALLOW_ORIGIN).toBe(ORIGIN);
    expect(s.settings.warnings.join('\n')).not.toMatch(/CORS|identity provider/);
  });

  test('dead-letter queues are retained with retainData, and deleted without', () => {
    const dlqIds = (t: ReturnType<typeof synth>) =>
      pipelineStageList.map((st) => logicalId(t.stateful, t.stateful.queues[st.name].dlq));
    const kept = s.statefulTemplate.toJSON().Resources as Resources;
    for (const id of dlqIds(s))
      expect(kept[id]).toMatchObject({
        Type: 'AWS::SQS::Queue',
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
      });
    const t = synth({ retainData: false, deletionProtection: false });
    const dropped = t.statefulTemplate.toJSON().Resources as Resources;
    for (const id of dlqIds(t)) expect(dropped[id]).toMatchObject({ DeletionPolicy: 'Delete' });
  });
});

describe('concurrency of the long functions', () => {
  test('send-message and follow-reply have reserved concurrency (20 and 10 by default, from context, or none); no other HTTP function does', () => {
    const reserved = (t: ReturnType<typeof synth>, name: string) =>
      t.functionResources[lambdaId(t, name)]!.Properties.ReservedConcurrentExecutions;
    expect(reserved(s, 'send-message')).toBe(20);
    expect(reserved(s, 'follow-reply')).toBe(10);
    for (const route of httpRouteList.filter((r) => r.name !== 'send-message' && r.name !== 'follow-reply'))
      expect([route.name, reserved(s, route.name)]).toEqual([route.name, undefined]);
    expect(reserved(synth({ sendMessageReservedConcurrency: '7' }), 'send-message')).toBe(7);
    expect(reserved(synth({ sendMessageReservedConcurrency: 'none' }), 'send-message')).toBeUndefined();
    expect(() => synth({ sendMessageReservedConcurrency: 0 })).toThrow(/sendMessageReservedConcurrency/);
    expect(reserved(synth({ followReplyReservedConcurrency: '3' }), 'follow-reply')).toBe(3);
    expect(reserved(synth({ followReplyReservedConcurrency: 'none' }), 'follow-reply')).toBeUndefined();
    expect(() => synth({ followReplyReservedConcurrency: 0 })).toThrow(/followReplyReservedConcurrency/);
  });

  test('each pipeline stage caps its concurrent batches: the manifest by default, <stage>MaxConcurrency from context', () => {
    const context = Object.fromEntries(pipelineStageList.map((st, i) => [stageConcurrencyKey(st.name), String(2 + i)]));
    expect(Object.keys(context)).toContain('pdfExtractMaxConcurrency');
    const t = synth(context);
    const mappings = byType(t.functionResources, 'AWS::Lambda::EventSourceMapping');
    pipelineStageList.forEach((st, i) => {
      const fnId = lambdaId(t, st.name);
      const [, mapping] = mappings.find(([, m]) => m.Properties.FunctionName.Ref === fnId)!;
      expect([st.name, mapping.Properties.ScalingConfig]).toEqual([st.name, { MaximumConcurrency: 2 + i }]);
    });
    expect(() => synth({ pdfEmbedMaxConcurrency: 1 })).toThrow(/pdfEmbedMaxConcurrency/);
  });
});

describe('cdk-nag (AwsSolutions and Serverless packs, as CDK validation plugins)', () => {
  interface Report {
    pluginReports: {
      pluginName: string;
      violations: { ruleName: string; violatingConstructs: { constructPath: string }[] }[];
    }[];
  }
  /** The findings neither fixed nor acknowledged (with their reason, beside the resource), as "rule @ construct". */
  function unacknowledged(context: Record<string, unknown>, change?: (service: ServiceApp) => void): string[] {
    const outdir = mkdtempSync(join(tmpdir(), 'nag-'));
    try {
      const app = new App({ outdir, context: { ...DEPLOY, ...context } });
      // Built first: `change?.(createServiceApp(…))` would skip building the app when there is no change.
      const service = createServiceApp({ app, code: placeholder, env: {} });
      change?.(service);
      Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
      try {
        app.synth();
        return [];
      } catch (err) {
        if ((err as Error).name !== 'ValidationFailed') throw err; // the findings are in the report
      }
      const report = JSON.parse(readFileSync(join(outdir, 'validation-report.json'), 'utf8')) as Report;
      return report.pluginReports
        .flatMap((p) => p.violations)
        .flatMap((v) => v.violatingConstructs.map((c) => `${v.ruleName.replace(/\[.*$/, '')} @ ${c.constructPath}`))
        .sort();
    } finally {
      rmSync(outdir, { recursive: true, force: true });
    }
  }

  // Every finding is fixed or acknowledged beside its resource with its reason: a new one fails here.
  test.each([
    ['the default deployment', {}],
    ['Bedrock as the AI provider', { AI_PROVIDER: 'bedrock' }],
    ['Bedrock Rerank as the reranker', { RERANK_PROVIDER: 'bedrock' }],
    ['tracing on', { tracing: 'true' }],
    ['S3 Vectors as the vector store', { VECTOR_STORE: 's3vectors' }],
  ])('%s has no unacknowledged finding', (_name, context) => {
    expect(unacknowledged(context)).toEqual([]);
  });

  test('a new wildcard is a finding: a statement on bucket/* beside the prefixes fails the check', () => {
    const grantEverything = (service: ServiceApp) =>
      service.functions['send-message']!.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: BUCKET_READ_ACTIONS,
          resources: [service.stateful.bucket.arnForObjects('*')],
        }),
      );
    expect(unacknowledged({}, grantEverything)).toEqual([
      'AwsSolutions-IAM5 @ ChatServiceApiFunctions/SendMessage/Role/DefaultPolicy/Resource',
    ]);
  });

  test('the files bucket writes server access logs to a bucket of its own, under a bucket policy', () => {
    const template = synth().statefulTemplate;
    const buckets = template.findResources('AWS::S3::Bucket');
    const logBucketId = Object.entries(buckets).find(([, b]: [string, any]) =>
      b.Properties.LifecycleConfiguration?.Rules?.some((r: any) => r.Id === 'expire-access-logs'),
    )?.[0];
    expect(logBucketId).toBeDefined();
    template.hasResourceProperties('AWS::S3::Bucket', {
      LoggingConfiguration: { DestinationBucketName: { Ref: logBucketId }, LogFilePrefix: 'files/' },
    });
    const logBucket = buckets[logBucketId!]!.Properties;
    expect(logBucket).toMatchObject({ OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] } });
    expect(logBucket.AccessControl).toBeUndefined();
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: logBucketId },
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Principal: { Service: 'logging.s3.amazonaws.com' }, Action: 's3:PutObject' }),
        ]),
      },
    });
  });
});

describe('VECTOR_STORE=s3vectors', () => {
  const vectors = synth({ VECTOR_STORE: 's3vectors' });
  const resources = vectors.functionResources;
  const statementsIn = (name: string) => {
    return roleStatements(vectors, name).map((st: any) => ({
      actions: [st.Action].flat() as string[],
      resources: JSON.stringify([st.Resource].flat()),
    }));
  };
  const vectorActions = (name: string) =>
    [...new Set(statementsIn(name).flatMap((st) => st.actions.filter((a) => a.startsWith('s3vectors:'))))].sort();

  test('one vector bucket in the stateful stack (none without the setting), its name given to every function', () => {
    vectors.statefulTemplate.resourceCountIs('AWS::S3Vectors::VectorBucket', 1);
    s.statefulTemplate.resourceCountIs('AWS::S3Vectors::VectorBucket', 0);
    for (const fn of manifestFunctions) {
      const id = lambdaId(vectors, fn.name);
      expect([fn.name, resources[id]!.Properties.Environment.Variables.S3_VECTORS_BUCKET]).toEqual([
        fn.name,
        expect.anything(),
      ]);
      expect(resources[id]!.Properties.Environment.Variables.VECTOR_STORE).toBe('s3vectors');
    }
  });

  test('least privilege: writers put and delete, readers query, deleters delete, on the indexes of that bucket only; the others nothing', () => {
    expect(vectorActions('pdf-embed')).toEqual([
      's3vectors:CreateIndex',
      's3vectors:DeleteVectors',
      's3vectors:GetIndex',
      's3vectors:ListIndexes',
      's3vectors:PutVectors',
    ]);
    expect(vectorActions('send-message')).toEqual(['s3vectors:GetVectors', 's3vectors:QueryVectors']);
    expect(vectorActions('delete-upload')).toEqual(['s3vectors:DeleteVectors', 's3vectors:ListIndexes']);
    expect(vectorActions('delete-me')).toEqual(['s3vectors:DeleteVectors', 's3vectors:ListIndexes']);
    for (const fn of manifestFunctions) {
      if (!('vectors' in fn.access)) expect([fn.name, vectorActions(fn.name)]).toEqual([fn.name, []]);
      for (const st of statementsIn(fn.name).filter((x) => x.actions.some((a) => a.startsWith('s3vectors:')))) {
        // The bucket (ListIndexes) or its indexes: an import of the stateful stack's bucket ARN.
        expect([fn.name, st.resources]).toEqual([fn.name, expect.stringContaining('VectorsVectorBucketArn')]);
        expect(st.resources).not.toContain('"*"');
      }
    }
    // The default synth grants no S3 Vectors right at all.
    for (const fn of manifestFunctions)
      expect(
        statementsOf(fn)
          .flatMap((st) => st.actions)
          .filter((a) => a.startsWith('s3vectors:')),
      ).toEqual([]);
  });
});
