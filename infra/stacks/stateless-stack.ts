import { CfnOutput, Duration, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as events from 'aws-cdk-lib/aws-events';
import * as eventTargets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { modelResources, type ModelResources } from '#shared/ai/bedrock-models.ts';
import { METRIC, SERVICE_NAME } from '#shared/metrics.ts';
import {
  deadLetterConsumerList,
  scheduledTaskList,
  httpRouteList,
  httpRoutes,
  manifestFunctions,
  pipelineStageList,
  webhookDelivery,
  type AiUse,
  type ManifestFunction,
  type PipelineStageName,
} from '../routes.ts';
import { corsPreflight, gatewayResponses, gatewayResponseTemplate } from '../gateway-responses.ts';
import type { StackSettings } from '../settings.ts';
import { ServiceFunction } from '../constructs/service-function.ts';
import { serviceDashboard } from '../dashboard.ts';
import { pascal, type StatefulStack } from './stateful-stack.ts';

// What can be redeployed at will: one Lambda per manifest function, the REST API in front of
// the HTTP ones, the SQS event source mappings of the pipeline stages, and their alarms.

/** API Gateway stage names cannot contain '/': the stage is `api`, every route lives under /v1. */
export const API_STAGE = 'api';
const API_ROOT = 'v1';
/** The longest a streamed reply may run (API Gateway's limit for STREAM integrations). */
const MAX_STREAM_INTEGRATION_SECONDS = 15 * 60;
/** Non-streaming integrations stop at 29 s unless the account raised its quota. */
export const MAX_BUFFERED_INTEGRATION_SECONDS = 29;

export type CodeFactory = (fn: ManifestFunction) => lambda.Code;

interface StatelessStackProps extends StackProps {
  settings: StackSettings;
  stateful: StatefulStack;
  code: CodeFactory;
}

export class StatelessStack extends Stack {
  readonly api: apigateway.RestApi;
  readonly functions: Record<string, ServiceFunction> = {};
  readonly dashboard: cloudwatch.Dashboard;
  /** The CloudWatch namespace of the functions' own metrics (shared/metrics.ts). */
  readonly metricsNamespace: string;

  constructor(scope: Construct, id: string, props: StatelessStackProps) {
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
    const alarmAction = new cloudwatchActions.SnsAction(stateful.alarmTopic);
    this.metricsNamespace = settings.serviceName;

    const routes = new Map(httpRouteList.map((r) => [r.name, r]));
    /** The streaming functions that may run for minutes: replies, and the streams following them. */
    const reserved: Record<string, number | 'none'> = {
      'send-message': settings.sendMessageReservedConcurrency,
      'follow-reply': settings.followReplyReservedConcurrency,
    };
    for (const fn of manifestFunctions) {
      const route = routes.get(fn.name);
      const reservedConcurrency = reserved[fn.name];
      const sf = new ServiceFunction(this, pascal(fn.name), {
        fn,
        code: props.code(fn),
        resources,
        // Metrics in EMF under the stack's namespace (shared/metrics.ts writes none without it).
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
      this.functions[fn.name] = sf;
      const errors = new cloudwatch.Alarm(this, `${pascal(fn.name)}ErrorsAlarm`, {
        alarmDescription: `${fn.name} failed (errors, timeouts or crashes)`,
        metric: sf.function.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      errors.addAlarmAction(alarmAction);
    }

    // Pipeline stages: partial batch responses, so one bad file never re-runs its neighbours.
    for (const stage of pipelineStageList) {
      this.functions[stage.name]!.function.addEventSource(
        new SqsEventSource(stateful.queues[stage.name]!.queue, {
          batchSize: stage.batchSize,
          maxConcurrency: settings.stageMaxConcurrency[stage.name],
          reportBatchItemFailures: true,
        }),
      );
    }

    // Webhook deliveries: their queue feeds the delivery function (partial batch responses).
    this.functions[webhookDelivery.name]!.function.addEventSource(
      new SqsEventSource(stateful.webhookQueue.queue, {
        batchSize: webhookDelivery.batchSize,
        maxConcurrency: webhookDelivery.maxConcurrency,
        reportBatchItemFailures: true,
      }),
    );

    // Dead-letter consumers: every stage's DLQ feeds them, so a file whose stage died on every
    // attempt is marked failed instead of staying `processing`.
    for (const consumer of deadLetterConsumerList) {
      for (const stage of pipelineStageList) {
        this.functions[consumer.name]!.function.addEventSource(
          new SqsEventSource(stateful.queues[stage.name]!.dlq, {
            batchSize: consumer.batchSize,
            reportBatchItemFailures: true,
          }),
        );
      }
    }

    // Scheduled tasks: an EventBridge rule invokes each (asynchronously; a failed run is the next run's).
    for (const task of scheduledTaskList) {
      const rule = new events.Rule(this, `${pascal(task.name)}Schedule`, {
        description: `Runs ${task.name} every ${task.everyMinutes} minutes`,
        schedule: events.Schedule.rate(Duration.minutes(task.everyMinutes)),
        targets: [new eventTargets.LambdaFunction(this.functions[task.name]!.function, { retryAttempts: 0 })],
      });
      Validations.of(rule).acknowledge({
        id: 'Serverless-EventBusDLQ',
        reason:
          'A schedule: the next run redoes whatever a failed one left (the task is idempotent), so a lost event loses nothing',
      });
    }

    this.api = this.restApi(settings);
    const alarm5xx = new cloudwatch.Alarm(this, 'Api5xxAlarm', {
      alarmDescription: 'The API answered 5xx (function failures, timeouts, integration errors)',
      metric: this.api.metricServerError({ period: Duration.minutes(5), statistic: 'Sum' }),
      threshold: settings.api5xxAlarmThreshold,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    alarm5xx.addAlarmAction(alarmAction);
    // A refused webhook delivery is a wrong webhook secret (every payment stalls while the
    // provider retries) or someone forging events: either needs a person, and neither is a 5xx.
    const webhook = httpRoutes['payment-webhook'];
    const webhookRefused = new cloudwatch.Alarm(this, 'PaymentWebhookRefusedAlarm', {
      alarmDescription: `${webhook.method} ${webhook.path} refused deliveries (4xx: a bad or stale signature, a wrong webhook secret)`,
      metric: new cloudwatch.Metric({
        namespace: this.metricsNamespace,
        metricName: METRIC.clientErrors,
        dimensionsMap: { service: SERVICE_NAME, route: `${webhook.method} ${webhook.path}` },
        period: Duration.minutes(5),
        statistic: 'Sum',
      }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    webhookRefused.addAlarmAction(alarmAction);

    this.dashboard = serviceDashboard(this, 'Dashboard', {
      namespace: this.metricsNamespace,
      dashboardName: settings.serviceName,
      apiName: `${settings.serviceName}-api`,
    });
    new CfnOutput(this, 'DashboardUrl', {
      description: 'The CloudWatch dashboard: requests and errors by route, model replies, ingestion',
      value: `https://console.aws.amazon.com/cloudwatch/home?region=${this.region}#dashboards:name=${this.dashboard.dashboardName}`,
    });
    new CfnOutput(this, 'ApiUrl', {
      description: 'Base URL of the API (ends in /api/v1)',
      value: `${this.api.url}${API_ROOT}`,
    });
  }

  /** The IAM resources of the configured Bedrock models, in BEDROCK_REGION or the stack's region. */
  private bedrockModels(bedrock: NonNullable<StackSettings['bedrock']>): Partial<Record<AiUse, ModelResources>> {
    const region = bedrock.region ?? this.region;
    return {
      chat: modelResources(bedrock.chatModel, region, this.account, this.partition),
      embeddings: modelResources(bedrock.embeddingModel, region, this.account, this.partition),
    };
  }

  private restApi(settings: StackSettings): apigateway.RestApi {
    const accessLogs = new logs.LogGroup(this, 'ApiAccessLogs', {
      retention: settings.logRetentionDays as logs.RetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const origins = settings.corsAllowOrigin === '*' ? apigateway.Cors.ALL_ORIGINS : [settings.corsAllowOrigin];
    const api = new apigateway.RestApi(this, 'Api', {
      restApiName: `${settings.serviceName}-api`,
      description: 'Chat, orders and PDF ingestion (routes from infra/routes.ts)',
      // Regional: streamed replies may idle up to 5 minutes (30 s on edge-optimized endpoints).
      endpointTypes: [apigateway.EndpointType.REGIONAL],
      cloudWatchRole: settings.apiGatewayCloudWatchRole,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      deployOptions: {
        stageName: API_STAGE,
        throttlingRateLimit: settings.apiThrottleRateLimit,
        throttlingBurstLimit: settings.apiThrottleBurstLimit,
        // Public routes (no caller to limit) get a throttle of their own, beside their per-IP limit.
        methodOptions: Object.fromEntries(
          httpRouteList
            .filter((r) => r.auth === 'public')
            .map((r) => [
              `/${API_ROOT}${r.path}/${r.method}`,
              {
                throttlingRateLimit: settings.publicThrottleRateLimit,
                throttlingBurstLimit: settings.publicThrottleBurstLimit,
              },
            ]),
        ),
        tracingEnabled: settings.tracing,
        accessLogDestination: new apigateway.LogGroupLogDestination(accessLogs),
        accessLogFormat: apigateway.AccessLogFormat.custom(
          JSON.stringify({
            requestId: apigateway.AccessLogField.contextRequestId(),
            time: apigateway.AccessLogField.contextRequestTime(),
            ip: apigateway.AccessLogField.contextIdentitySourceIp(),
            userAgent: apigateway.AccessLogField.contextIdentityUserAgent(),
            method: apigateway.AccessLogField.contextHttpMethod(),
            path: apigateway.AccessLogField.contextPath(),
            resource: apigateway.AccessLogField.contextResourcePath(),
            status: apigateway.AccessLogField.contextStatus(),
            responseLength: apigateway.AccessLogField.contextResponseLength(),
            latencyMs: apigateway.AccessLogField.contextResponseLatency(),
            integrationLatencyMs: apigateway.AccessLogField.contextIntegrationLatency(),
            integrationStatus: apigateway.AccessLogField.contextIntegrationStatus(),
            error: apigateway.AccessLogField.contextErrorMessage(),
            integrationError: apigateway.AccessLogField.contextIntegrationErrorMessage(),
          }),
        ),
      },
      defaultCorsPreflightOptions: {
        allowOrigins: origins,
        allowMethods: corsPreflight.allowMethods,
        allowHeaders: corsPreflight.allowHeaders,
        exposeHeaders: corsPreflight.exposeHeaders,
        maxAge: Duration.seconds(corsPreflight.maxAgeSeconds),
      },
    });

    // Answers API Gateway gives on its own (no function involved), shaped like ours and with CORS;
    // the local gateway gives the same ones (infra/gateway-responses.ts).
    const corsHeader = { 'Access-Control-Allow-Origin': `'${settings.corsAllowOrigin}'` };
    for (const r of gatewayResponses) {
      api.addGatewayResponse(r.id, {
        type: apigateway.ResponseType.of(r.type),
        ...('statusCode' in r && { statusCode: String(r.statusCode) }),
        responseHeaders: corsHeader,
        templates: { 'application/json': gatewayResponseTemplate(r) },
      });
    }

    // cdk-nag findings (infra/app.ts runs the packs on every synth) that do not apply, and why.
    const acknowledge = (id: string, reason: string) => Validations.of(api).acknowledge({ id, reason });
    const noAuthorizer =
      "No API Gateway authorizer by design: every signed-in route verifies the service JWT in its function and confirms the user in the table (shared/auth); POST /auth verifies the identity provider's ID token; the public GET /shared/{shareId} needs none (an unguessable id, limited per source IP and throttled), nor does POST /payments/webhook (the provider's signature over the body is checked in its function)";
    acknowledge('AwsSolutions-APIG4', noAuthorizer);
    acknowledge('AwsSolutions-COG4', noAuthorizer);
    acknowledge(
      'AwsSolutions-APIG2',
      "Each function validates its request against the contract's zod schemas and answers 4xx in the route's body shape; an API Gateway request validator would answer in its own shape and repeat the contract",
    );
    acknowledge(
      'AwsSolutions-APIG3',
      'No WAF web ACL by default: the stage is throttled and the functions enforce per-user rate limits; a web ACL can be associated per deployment',
    );
    acknowledge(
      'AwsSolutions-APIG6',
      'JSON access logs record every request; execution logging needs the account-wide API Gateway CloudWatch role (setting apiGatewayCloudWatchRole), so it is left to the deployment',
    );
    acknowledge(
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      'The account-level API Gateway logging role that CDK creates (apiGatewayCloudWatchRole) uses AmazonAPIGatewayPushToCloudWatchLogs, the managed policy AWS documents for it',
    );
    if (!settings.tracing) {
      acknowledge(
        'Serverless-APIGWXrayEnabled',
        'Tracing is a per-deployment setting (`tracing`, default off), for the stage as for the functions',
      );
    }

    const root = api.root.addResource(API_ROOT);
    for (const route of httpRouteList) {
      const fn = this.functions[route.name]!.function;
      const fnTimeout = this.functions[route.name]!.function.timeout?.toSeconds() ?? MAX_BUFFERED_INTEGRATION_SECONDS;
      const integration = route.streaming
        ? new apigateway.LambdaIntegration(fn, {
            allowTestInvoke: false,
            responseTransferMode: apigateway.ResponseTransferMode.STREAM,
            // As long as the function may run: a long reply must not be cut by the gateway.
            timeout: Duration.seconds(Math.min(fnTimeout, MAX_STREAM_INTEGRATION_SECONDS)),
          })
        : new apigateway.LambdaIntegration(fn, { allowTestInvoke: false });
      resourceFor(root, route.path).addMethod(route.method, integration);
    }
    return api;
  }
}

/** The resource of a manifest path under root, refusing sibling path variables with different names. */
export function resourceFor(root: apigateway.IResource, path: string): apigateway.IResource {
  let resource = root;
  for (const part of path.split('/').filter(Boolean)) {
    const existing = resource.getResource(part);
    if (existing) {
      resource = existing;
      continue;
    }
    if (part.startsWith('{')) {
      const sibling = resource.node.children
        .map((c) => (c as Partial<apigateway.IResource>).path?.split('/').pop())
        .find((p) => p?.startsWith('{'));
      if (sibling) {
        throw new Error(
          `infra/routes.ts: ${path} names a path variable ${part} where another route uses ${sibling}; ` +
            'API Gateway allows one variable name per position',
        );
      }
    }
    resource = resource.addResource(part);
  }
  return resource;
}

/** An existing secret by name or ARN (complete ARNs end in -XXXXXX). */
function importSecret(scope: Construct, id: string, nameOrArn: string): secretsmanager.ISecret {
  if (!nameOrArn.startsWith('arn:')) return secretsmanager.Secret.fromSecretNameV2(scope, id, nameOrArn);
  return /-[A-Za-z0-9]{6}$/.test(nameOrArn)
    ? secretsmanager.Secret.fromSecretCompleteArn(scope, id, nameOrArn)
    : secretsmanager.Secret.fromSecretPartialArn(scope, id, nameOrArn);
}
