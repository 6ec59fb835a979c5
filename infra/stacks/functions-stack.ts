import { Duration, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as eventTargets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { modelResources, type ModelResources } from '#shared/ai/bedrock-models.ts';
import {
  deadLetterConsumerList,
  scheduledTaskList,
  httpRouteList,
  pipelineStageList,
  webhookDelivery,
  type AiUse,
  type ManifestFunction,
  type PipelineStageName,
} from '../routes.ts';
import { serviceFunctionName, type StackSettings } from '../settings.ts';
import { ServiceFunction } from '../constructs/service-function.ts';
import { pascal, type StatefulStack } from './stateful-stack.ts';

// Lambda functions of the manifest, with what invokes them from inside AWS: the app makes two of
// these stacks, the HTTP functions (the API stack integrates them by name) and the workers
// (pipeline stages with their SQS event sources, the dead-letter consumers, the scheduled tasks).
// Functions have fixed names (<serviceName>-<function>), so the API and monitoring stacks reach
// them without exports (docs/DECISIONS.md "Stacks within CloudFormation's limits").

export type CodeFactory = (fn: ManifestFunction) => lambda.Code;

interface FunctionsStackProps extends StackProps {
  settings: StackSettings;
  stateful: StatefulStack;
  code: CodeFactory;
  /** The manifest functions this stack holds. */
  functions: readonly ManifestFunction[];
}

export class FunctionsStack extends Stack {
  readonly functions: Record<string, ServiceFunction> = {};
  /** The CloudWatch namespace of the functions' own metrics (shared/observability/metrics.ts). */
  readonly metricsNamespace: string;

  constructor(scope: Construct, id: string, props: FunctionsStackProps) {
    super(scope, id, props);
    const { settings, stateful } = props;

    // The chosen provider's access only: the OpenAI key secret, or the Bedrock models.
    const openAiSecret =
      settings.aiProvider === 'openai' && settings.openAiKeySecret
        ? importSecret(this, 'OpenAiKey', settings.openAiKeySecret)
        : undefined;
    const bedrockModels = settings.bedrock && this.bedrockModels(settings.bedrock);
    const bedrockRerankModel =
      settings.bedrockRerank &&
      modelResources(
        settings.bedrockRerank.model,
        settings.bedrockRerank.region ?? this.region,
        this.account,
        this.partition,
      );
    // The payment provider's keys, for the functions whose access names `payments` only.
    const paymentsSecret = settings.paymentsSecret
      ? importSecret(this, 'PaymentsKeys', settings.paymentsSecret)
      : undefined;
    const resources = {
      table: stateful.table,
      bucket: stateful.bucket,
      queues: Object.fromEntries(Object.entries(stateful.queues).map(([stage, q]) => [stage, q.queue])) as Record<
        PipelineStageName,
        (typeof stateful.queues)[PipelineStageName]['queue']
      >,
      webhookQueue: stateful.webhookQueue.queue,
      jwtSecret: stateful.jwtSecret,
      ...(openAiSecret && { openAiSecret }),
      ...(paymentsSecret && { paymentsSecret }),
      ...(bedrockModels && { bedrockModels }),
      ...(bedrockRerankModel && { bedrockRerankModel }),
      ...(stateful.vectorBucket && { vectorBucket: stateful.vectorBucket }),
    };
    this.metricsNamespace = settings.serviceName;

    const routes = new Map(httpRouteList.map((r) => [r.name, r]));
    /** The streaming functions that may run for minutes: replies, and the streams following them. */
    const reserved: Record<string, number | 'none'> = {
      'send-message': settings.sendMessageReservedConcurrency,
      'follow-reply': settings.followReplyReservedConcurrency,
    };
    for (const fn of props.functions) {
      const route = routes.get(fn.name);
      const reservedConcurrency = reserved[fn.name];
      this.functions[fn.name] = new ServiceFunction(this, pascal(fn.name), {
        fn,
        functionName: serviceFunctionName(settings.serviceName, fn.name),
        code: props.code(fn),
        resources,
        // Metrics in EMF under the service's namespace (shared/observability/metrics.ts writes none without it).
        settings: { ...settings.functionEnv, POWERTOOLS_METRICS_NAMESPACE: this.metricsNamespace },
        logRetentionDays: settings.logRetentionDays,
        tracing: settings.tracing,
        description: route
          ? `${route.method} /api/v1${route.path}`
          : fn.kind === 'dlq'
            ? `SQS dead letters: ${fn.name}`
            : fn.kind === 'schedule'
              ? `Scheduled: ${fn.name}`
              : `SQS ${fn.name}`,
        // The long HTTP functions are capped here; the pipeline stages by their event sources below.
        ...(typeof reservedConcurrency === 'number' && { reservedConcurrency }),
      });
    }

    // Pipeline stages: partial batch responses, so one bad file never re-runs its neighbours.
    for (const stage of pipelineStageList) {
      this.functions[stage.name]?.function.addEventSource(
        new SqsEventSource(stateful.queues[stage.name]!.queue, {
          batchSize: stage.batchSize,
          maxConcurrency: settings.stageMaxConcurrency[stage.name],
          reportBatchItemFailures: true,
        }),
      );
    }

    // Webhook deliveries: their queue feeds the delivery function (partial batch responses).
    this.functions[webhookDelivery.name]?.function.addEventSource(
      new SqsEventSource(stateful.webhookQueue.queue, {
        batchSize: webhookDelivery.batchSize,
        maxConcurrency: webhookDelivery.maxConcurrency,
        reportBatchItemFailures: true,
      }),
    );

    // Dead-letter consumers: every stage's DLQ feeds them, so a file whose stage died on every
    // attempt is marked failed instead of staying `processing`.
    for (const consumer of deadLetterConsumerList) {
      const fn = this.functions[consumer.name]?.function;
      if (!fn) continue;
      for (const stage of pipelineStageList) {
        fn.addEventSource(
          new SqsEventSource(stateful.queues[stage.name]!.dlq, {
            batchSize: consumer.batchSize,
            reportBatchItemFailures: true,
          }),
        );
      }
    }

    // Scheduled tasks: an EventBridge rule invokes each (asynchronously; a failed run is the next run's).
    for (const task of scheduledTaskList) {
      const fn = this.functions[task.name]?.function;
      if (!fn) continue;
      const rule = new events.Rule(this, `${pascal(task.name)}Schedule`, {
        description: `Runs ${task.name} every ${task.everyMinutes} minutes`,
        schedule: events.Schedule.rate(Duration.minutes(task.everyMinutes)),
        targets: [new eventTargets.LambdaFunction(fn, { retryAttempts: 0 })],
      });
      Validations.of(rule).acknowledge({
        id: 'Serverless-EventBusDLQ',
        reason:
          'A schedule: the next run redoes whatever a failed one left (the task is idempotent), so a lost event loses nothing',
      });
    }
  }

  /** The IAM resources of the configured Bedrock models, in BEDROCK_REGION or the stack's region. */
  private bedrockModels(bedrock: NonNullable<StackSettings['bedrock']>): Partial<Record<AiUse, ModelResources>> {
    const region = bedrock.region ?? this.region;
    return {
      chat: modelResources(bedrock.chatModel, region, this.account, this.partition),
      embeddings: modelResources(bedrock.embeddingModel, region, this.account, this.partition),
    };
  }
}

/** An existing secret by name or ARN (complete ARNs end in -XXXXXX). */
function importSecret(scope: Construct, id: string, nameOrArn: string): secretsmanager.ISecret {
  if (!nameOrArn.startsWith('arn:')) return secretsmanager.Secret.fromSecretNameV2(scope, id, nameOrArn);
  return /-[A-Za-z0-9]{6}$/.test(nameOrArn)
    ? secretsmanager.Secret.fromSecretCompleteArn(scope, id, nameOrArn)
    : secretsmanager.Secret.fromSecretPartialArn(scope, id, nameOrArn);
}
