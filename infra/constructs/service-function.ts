import { Duration, RemovalPolicy, Size, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { ModelResources } from '#shared/ai/bedrock-models.ts';
import {
  queueUrlSetting,
  type Access,
  type AiUse,
  type BucketPrefix,
  type ManifestFunction,
  type PipelineStageName,
} from '../routes.ts';
import { tableDefinition } from '../table.ts';

/** The Lambda runtime of every function; npm scripts run the same Node major (the `node` devDependency). */
export const LAMBDA_RUNTIME = lambda.Runtime.NODEJS_24_X;

// Every Lambda of the service, with its defaults in one place (runtime, architecture, source
// maps, log group and retention) and its permissions derived from the manifest's `access`:
// each function gets its own role holding exactly the actions its code uses, on exactly the
// resources it touches. No managed policies, no wildcard actions, no `*` resources.

/** The data-plane actions behind each access level (kept short and explicit on purpose). */
export const TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:BatchGetItem'];
export const TABLE_WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
];
export const BUCKET_LIST_ACTIONS = ['s3:ListBucket'];
export const BUCKET_READ_ACTIONS = ['s3:GetObject'];
export const BUCKET_WRITE_ACTIONS = ['s3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload'];

interface ServiceResources {
  table: dynamodb.ITable;
  bucket: s3.IBucket;
  queues: Record<PipelineStageName, sqs.IQueue>;
  /** The webhook queue: functions whose access names `events` send to it. */
  webhookQueue: sqs.IQueue;
  jwtSecret: secretsmanager.ISecret;
  /** The OpenAI key secret, when OpenAI is the AI provider. */
  openAiSecret?: secretsmanager.ISecret;
  /** The payment provider's keys ({ secretKey, webhookSecret }); absent: no payments. */
  paymentsSecret?: secretsmanager.ISecret;
  /** The Bedrock models per use, when Bedrock is the AI provider. */
  bedrockModels?: Partial<Record<AiUse, ModelResources>>;
  /** The Bedrock reranking model, when RERANK_PROVIDER=bedrock. */
  bedrockRerankModel?: ModelResources;
  /** The S3 Vectors bucket, with VECTOR_STORE=s3vectors. */
  vectorBucket?: { name: string; arn: string };
}

/** S3 Vectors rights per use of the manifest (`vectors`), on the bucket's indexes only. */
const VECTOR_INDEX_ACTIONS = {
  write: ['s3vectors:PutVectors', 's3vectors:DeleteVectors', 's3vectors:CreateIndex', 's3vectors:GetIndex'],
  // A query with a metadata filter or metadata returned needs GetVectors too.
  query: ['s3vectors:QueryVectors', 's3vectors:GetVectors'],
  delete: ['s3vectors:DeleteVectors'],
} as const;

/** What invoking a Bedrock model takes (Converse is InvokeModel, ConverseStream the streaming one). */
const BEDROCK_INVOKE_ACTIONS = ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'];

interface ServiceFunctionProps {
  fn: ManifestFunction;
  /** The Lambda name, fixed (serviceFunctionName in infra/settings.ts). */
  functionName: string;
  code: lambda.Code;
  resources: ServiceResources;
  /** Settings shared by every function (passed-through configuration). */
  settings: Record<string, string>;
  logRetentionDays: number;
  description?: string;
  /** Concurrent executions reserved for (and capping) this function. */
  reservedConcurrency?: number;
  /** X-Ray active tracing and Powertools Tracer (shared/observability/tracing.ts); off unless set. */
  tracing?: boolean;
}

const reads = (level: Access['table']) => level === 'read' || level === 'readwrite';
const writes = (level: Access['table']) => level === 'write' || level === 'readwrite';

export class ServiceFunction extends Construct {
  readonly function: lambda.Function;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    const { fn, resources } = props;
    const access = fn.access;

    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetentionDays as logs.RetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `${fn.name}: least privilege from infra/routes.ts`,
    });

    const environment: Record<string, string> = {
      // Stack traces point at the TypeScript sources through the bundle's source map.
      NODE_OPTIONS: '--enable-source-maps',
      ...props.settings,
      TABLE_NAME: resources.table.tableName,
      BUCKET_NAME: resources.bucket.bucketName,
      // Deployed functions never fetch from loopback; only npm start allows it.
      PDF_ALLOW_LOOPBACK: 'false',
      WEBHOOK_ALLOW_LOOPBACK: 'false',
      // Only with tracing on: shared/observability/tracing.ts does not even import the tracer otherwise.
      ...(props.tracing && { POWERTOOLS_TRACE_ENABLED: 'true' }),
    };
    for (const stage of access.sendTo ?? []) environment[queueUrlSetting[stage]] = queueOf(resources, stage).queueUrl;
    if (access.events) environment.WEBHOOK_QUEUE_URL = resources.webhookQueue.queueUrl;
    if (access.jwtSecret) environment.SERVICE_JWT_SECRET_ARN = resources.jwtSecret.secretArn;
    if (access.ai?.length && resources.openAiSecret)
      environment.OPENAI_API_KEY_SECRET_ARN = resources.openAiSecret.secretArn;
    if (access.payments && resources.paymentsSecret)
      environment.PAYMENTS_SECRET_ARN = resources.paymentsSecret.secretArn;
    // Every function's configuration names the bucket (VECTOR_STORE=s3vectors needs one); only
    // the manifest's `vectors` grants rights in it.
    if (resources.vectorBucket) environment.S3_VECTORS_BUCKET = resources.vectorBucket.name;

    this.function = new lambda.Function(this, 'Function', {
      functionName: props.functionName,
      description: props.description ?? fn.name,
      runtime: LAMBDA_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      handler: 'index.handler',
      code: props.code,
      timeout: Duration.seconds(fn.timeoutSeconds),
      memorySize: fn.memoryMb,
      ephemeralStorageSize: fn.tmpMb === undefined ? undefined : Size.mebibytes(fn.tmpMb),
      role: this.role,
      logGroup: this.logGroup,
      environment,
      ...(props.reservedConcurrency !== undefined && { reservedConcurrentExecutions: props.reservedConcurrency }),
      ...(props.tracing && { tracing: lambda.Tracing.ACTIVE }),
    });

    this.grantAccess(access, resources);
    this.acknowledgeNagFindings(fn, props.tracing ?? false);
  }

  /** cdk-nag findings (infra/app.ts runs the packs on every synth) that do not apply, and why. */
  private acknowledgeNagFindings(fn: ManifestFunction, tracing: boolean): void {
    const acknowledge = (id: string, reason: string) => Validations.of(this).acknowledge({ id, reason });
    acknowledge(
      'Serverless-LambdaDLQ',
      fn.kind === 'http'
        ? 'False positive: API Gateway invokes this function synchronously and the caller gets the error; a Lambda DLQ only receives failed asynchronous invocations'
        : fn.kind === 'schedule'
          ? 'A scheduled task whose every run redoes what a failed run left (idempotent, resumable): a failed invocation has nothing a DLQ could give back'
          : "False positive: an SQS event source mapping invokes this function; a message that keeps failing goes to its queue's dead-letter queue (redrive policy), which a Lambda DLQ does not replace",
    );
    if (tracing) {
      acknowledge(
        'AwsSolutions-IAM5[Resource::*]',
        'Active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords (added by CDK) support no resource-level permissions, so AWS documents them on "*"',
      );
    } else {
      acknowledge(
        'Serverless-LambdaTracing',
        'Tracing is a per-deployment setting (`tracing`, default off): loading the tracer costs every cold start (npm run bench cold-start) and traces are billed',
      );
    }
    if (fn.kind === 'queue' || fn.kind === 'dlq') {
      acknowledge(
        'Serverless-LambdaEventSourceMappingDestination',
        "False positive for SQS sources: failed messages go to the queue's dead-letter queue through its redrive policy; on-failure destinations are for stream sources",
      );
    }
  }

  /**
   * cdk-nag's AwsSolutions-IAM5 flags every resource with a `*`, prefix/* included, and names it
   * as the template spells it: for the bucket of the other stack, by the name of the export,
   * which exists only once references are resolved. So the acknowledgement is made then, in a
   * validation (they run after references are resolved and before the validation plugins),
   * for exactly these object ARNs.
   */
  private acknowledgeObjectWildcards(objectArns: string[]): void {
    this.node.addValidation({
      validate: () => {
        for (const arn of objectArns) {
          Validations.of(this).acknowledge({
            id: `AwsSolutions-IAM5[Resource::${flattenReference(Stack.of(this).resolve(arn))}]`,
            reason:
              'Object keys name the user and the file (uploads/<userId>/<fileId>.pdf, work/<fileId>/<runId>/…, vectors/<fileId>/…), so rights go to the key prefixes this function uses (infra/routes.ts), not to single objects',
          });
        }
        return [];
      },
    });
  }

  /** The manifest's access, as IAM statements on this function's role. */
  private grantAccess(access: Access, r: ServiceResources): void {
    const allow = (actions: string[], resources: string[]) =>
      this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources }));

    // Logs: this function's own log group only.
    allow(['logs:CreateLogStream', 'logs:PutLogEvents'], [this.logGroup.logGroupArn]);

    if (reads(access.table)) {
      const indexArns = tableDefinition.globalSecondaryIndexes.map((g) => `${r.table.tableArn}/index/${g.indexName}`);
      allow(TABLE_READ_ACTIONS, [r.table.tableArn]);
      allow(['dynamodb:Query'], indexArns);
    }
    if (writes(access.table)) allow(TABLE_WRITE_ACTIONS, [r.table.tableArn]);
    else if (access.apiKeys) {
      // A read-only function that takes API keys records their use: UpdateItem of `lastUsedAt` on API key items only.
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['dynamodb:UpdateItem'],
          resources: [r.table.tableArn],
          conditions: {
            'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['APIKEY#*'] },
            'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['PK', 'SK', 'lastUsedAt'] },
          },
        }),
      );
    }

    // Object rights on the key prefixes the function uses (infra/routes.ts), and listing on the
    // bucket: deleting a run's work files goes by prefix, and without s3:ListBucket a missing key
    // answers 403 instead of 404 (NoSuchKey). No bucket configuration rights. Presigned URLs
    // carry the signer's rights, so a function that presigns uploads needs `write` itself.
    const objects = (prefixes: readonly BucketPrefix[]) => prefixes.map((p) => r.bucket.arnForObjects(`${p}*`));
    if (access.bucket) allow(BUCKET_LIST_ACTIONS, [r.bucket.bucketArn]);
    if (access.bucket?.read?.length) allow(BUCKET_READ_ACTIONS, objects(access.bucket.read));
    if (access.bucket?.write?.length) allow(BUCKET_WRITE_ACTIONS, objects(access.bucket.write));
    const prefixes = [...new Set([...(access.bucket?.read ?? []), ...(access.bucket?.write ?? [])])];
    if (prefixes.length) this.acknowledgeObjectWildcards(objects(prefixes));

    const targets = (access.sendTo ?? []).map((stage: PipelineStageName) => queueOf(r, stage).queueArn);
    if (access.events) targets.push(r.webhookQueue.queueArn);
    if (targets.length) allow(['sqs:SendMessage'], targets);

    if (access.jwtSecret) allow(['secretsmanager:GetSecretValue'], [r.jwtSecret.secretArn]);
    if (access.ai?.length && r.openAiSecret)
      allow(['secretsmanager:GetSecretValue'], [secretArnPattern(r.openAiSecret)]);
    if (access.payments && r.paymentsSecret)
      allow(['secretsmanager:GetSecretValue'], [secretArnPattern(r.paymentsSecret)]);
    if (r.bedrockModels) this.grantBedrock(access.ai ?? [], r.bedrockModels);
    if (r.bedrockRerankModel && access.ai?.includes('rerank')) this.grantRerank(r.bedrockRerankModel);
    if (r.vectorBucket && access.vectors?.length) this.grantVectors(access, r.vectorBucket, objects);
  }

  /**
   * Rights on the vector bucket's indexes (made at run time, one per user and model: the index
   * names are not known at synth, hence `index/*`), listing the user's indexes on the bucket, and
   * reading the lexical objects that list a file's vector keys (writers and deleters).
   */
  private grantVectors(
    access: Access,
    vectorBucket: NonNullable<ServiceResources['vectorBucket']>,
    objects: (prefixes: readonly BucketPrefix[]) => string[],
  ): void {
    const uses = access.vectors ?? [];
    const indexes = `${vectorBucket.arn}/index/*`;
    const actions = [...new Set(uses.flatMap((use) => VECTOR_INDEX_ACTIONS[use]))];
    this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions, resources: [indexes] }));
    if (uses.includes('write') || uses.includes('delete')) {
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: ['s3vectors:ListIndexes'], resources: [vectorBucket.arn] }),
      );
      const listed = objects(['work/', 'vectors/']);
      this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: BUCKET_READ_ACTIONS, resources: listed }));
      this.acknowledgeObjectWildcards(listed);
    }
    this.node.addValidation({
      validate: () => {
        Validations.of(this).acknowledge({
          id: `AwsSolutions-IAM5[Resource::${flattenReference(Stack.of(this).resolve(indexes))}]`,
          reason:
            'S3 Vectors indexes are made at run time, one per user and embedding model (shared/retrieval/vector-store.ts): rights go to the indexes of this one vector bucket',
        });
        return [];
      },
    });
  }

  /**
   * Invoke rights on the models this function uses and nothing else. A model behind an
   * inference profile is allowed only through that profile (it may run in any region the
   * profile routes to, so the foundation model's region is left open, the profile is not).
   */
  private grantBedrock(uses: AiUse[], models: Partial<Record<AiUse, ModelResources>>): void {
    const wanted = [...new Set(uses)].flatMap((use) => models[use] ?? []);
    const invoked = [...new Set(wanted.flatMap((m) => m.invoked))];
    if (invoked.length)
      this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: BEDROCK_INVOKE_ACTIONS, resources: invoked }));
    for (const m of wanted) {
      if (!m.throughProfile) continue;
      this.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: BEDROCK_INVOKE_ACTIONS,
          resources: m.throughProfile.foundationModelArns,
          conditions: { StringEquals: { 'bedrock:InferenceProfileArn': m.throughProfile.profileArn } },
        }),
      );
    }
  }

  /**
   * Bedrock's Rerank API: `bedrock:Rerank`, which has no resource-level permissions (AWS documents
   * it on "*"), and InvokeModel on the one reranking model, which is what decides which model may be
   * used (docs/DECISIONS.md "Reranking").
   */
  private grantRerank(model: ModelResources): void {
    this.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['bedrock:Rerank'], resources: ['*'] }));
    this.role.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['bedrock:InvokeModel'], resources: model.invoked }),
    );
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'bedrock:Rerank supports no resource-level permissions, so AWS documents it on "*"; the model it may run is bounded by bedrock:InvokeModel on the one reranking model',
    });
  }
}

function queueOf(r: ServiceResources, stage: PipelineStageName): sqs.IQueue {
  const queue = r.queues[stage];
  if (!queue) throw new Error(`infra/routes.ts: sendTo names ${stage}, which is not a pipeline stage`);
  return queue;
}

/** A CloudFormation value as a template holds it: a string, or one of the intrinsic functions cdk-nag resolves. */
type CfnValue =
  | string
  | {
      'Fn::Join'?: [string, CfnValue[]];
      'Fn::ImportValue'?: CfnValue;
      'Fn::GetAtt'?: [CfnValue, CfnValue];
      Ref?: CfnValue;
    };

/** A resolved CloudFormation value as cdk-nag writes it in a finding (Fn::Join joined, an import by its name, <Ref>, <Res.Attr>). */
function flattenReference(node: CfnValue): string {
  if (typeof node === 'string') return node.replace(/\$\{/g, '<').replace(/\}/g, '>');
  if (node['Fn::Join']) return node['Fn::Join'][1].map(flattenReference).join(node['Fn::Join'][0]);
  if (node['Fn::ImportValue']) return flattenReference(node['Fn::ImportValue']);
  if (node['Fn::GetAtt'])
    return `<${flattenReference(node['Fn::GetAtt'][0])}.${flattenReference(node['Fn::GetAtt'][1])}>`;
  if (node.Ref) return `<${flattenReference(node.Ref)}>`;
  return JSON.stringify(node);
}

/** An imported secret known by name has an ARN without its random suffix; match that suffix. */
function secretArnPattern(secret: secretsmanager.ISecret): string {
  return secret.secretFullArn ?? `${secret.secretArn}-??????`;
}
