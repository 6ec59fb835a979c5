import { CfnOutput, Duration, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { httpRouteList, manifestFunctions } from '../routes.ts';
import {
  corsPreflight,
  gatewayMethodBody,
  gatewayMethods,
  gatewayResponses,
  gatewayResponseTemplate,
} from '../gateway-responses.ts';
import { serviceFunctionName, type StackSettings } from '../settings.ts';
import { pascal } from './stateful-stack.ts';

// The REST API in front of the HTTP functions: stage, routes, gateway responses, access logs, and
// the permission of each route to invoke its function. The functions live in the ApiFunctions
// stack, reached by their fixed names (no export to import), so this stack deploys after it
// (docs/DECISIONS.md "Stacks within CloudFormation's limits").

/** API Gateway stage names cannot contain '/': the stage is `api`, every route lives under /v1. */
export const API_STAGE = 'api';
const API_ROOT = 'v1';
/** The longest a streamed reply may run (API Gateway's limit for STREAM integrations). */
const MAX_STREAM_INTEGRATION_SECONDS = 15 * 60;
/** Non-streaming integrations stop at 29 s unless the account raised its quota. */
export const MAX_BUFFERED_INTEGRATION_SECONDS = 29;

/** The REST API's name (its CloudWatch metrics carry it as `ApiName`). */
export const restApiName = (serviceName: string) => `${serviceName}-api`;

interface ApiStackProps extends StackProps {
  settings: StackSettings;
}

export class ApiStack extends Stack {
  readonly api: apigateway.RestApi;

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props);
    const { settings } = props;
    this.api = this.restApi(settings);
    new CfnOutput(this, 'ApiUrl', {
      description: 'Base URL of the API (ends in /api/v1)',
      value: `${this.api.url}${API_ROOT}`,
    });
  }

  private restApi(settings: StackSettings): apigateway.RestApi {
    const accessLogs = new logs.LogGroup(this, 'ApiAccessLogs', {
      retention: settings.logRetentionDays as logs.RetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const origins = settings.corsAllowOrigin === '*' ? apigateway.Cors.ALL_ORIGINS : [settings.corsAllowOrigin];
    const api = new apigateway.RestApi(this, 'Api', {
      restApiName: restApiName(settings.serviceName),
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
    const timeouts = new Map(manifestFunctions.map((f) => [f.name, f.timeoutSeconds]));
    for (const route of httpRouteList) {
      // By name: the permission to invoke it is made here, beside its method (scoped to that method).
      const fn = lambda.Function.fromFunctionName(
        this,
        `${pascal(route.name)}Function`,
        serviceFunctionName(settings.serviceName, route.name),
      );
      const fnTimeout = timeouts.get(route.name) ?? MAX_BUFFERED_INTEGRATION_SECONDS;
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
    // Answers of the gateway's own on a route's path: a mock integration, no function.
    for (const m of gatewayMethods) {
      const headers = { Allow: `'${m.allow}'`, ...corsHeader };
      resourceFor(root, m.path).addMethod(
        m.method,
        new apigateway.MockIntegration({
          requestTemplates: { 'application/json': `{"statusCode": ${m.statusCode}}` },
          integrationResponses: [
            {
              statusCode: String(m.statusCode),
              responseParameters: Object.fromEntries(
                Object.entries(headers).map(([h, v]) => [`method.response.header.${h}`, v]),
              ),
              responseTemplates: { 'application/json': gatewayMethodBody(m) },
            },
          ],
        }),
        {
          methodResponses: [
            {
              statusCode: String(m.statusCode),
              responseParameters: Object.fromEntries(
                Object.keys(headers).map((h) => [`method.response.header.${h}`, true]),
              ),
            },
          ],
        },
      );
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
