// The route manifest: every HTTP route and every pipeline stage, with what each function may
// touch. What a route is comes from its domain (shared/<domain>/routes.ts), what its function gets
// from the deployment (infra/deployment/), joined here by name; the CDK stack, the esbuild build
// and the local runtime are all generated from the join, so they cannot drift apart. A function's
// entry file is always functions/<name>.ts. docs/DECISIONS.md "Routes: definition and deployment".

import type { AuthMode, HttpMethod, HttpRouteSettings, RouteDefinitions } from '#shared/http/route.ts';
import { queueUrlSetting, stageSettings, type PipelineStageName } from '#shared/files/stages.ts';
import { accountExportRoutes } from '#shared/account-export/routes.ts';
import { apiKeyRoutes } from '#shared/auth/routes.ts';
import { chatRoutes } from '#shared/chats/routes.ts';
import { collectionRoutes } from '#shared/collections/routes.ts';
import { completionRoutes } from '#shared/completions/routes.ts';
import { erasureRoutes } from '#shared/erasure/routes.ts';
import { fileRoutes } from '#shared/files/routes.ts';
import { mcpRoutes } from '#shared/mcp/routes.ts';
import { orderRoutes } from '#shared/orders/routes.ts';
import { paymentRoutes } from '#shared/payments/routes.ts';
import { productRoutes } from '#shared/products/routes.ts';
import { retrievalRoutes } from '#shared/retrieval/routes.ts';
import { sharingRoutes } from '#shared/sharing/routes.ts';
import { usageRoutes } from '#shared/usage/routes.ts';
import { userRoutes } from '#shared/users/routes.ts';
import { webhookRoutes } from '#shared/webhooks/routes.ts';
import type { Access } from './deployment/access.ts';
import { httpDeployments, type HttpDeployment } from './deployment/http.ts';
import {
  deadLetterConsumers,
  pipelineStages,
  scheduledTasks,
  webhookDelivery,
  type DeadLetterConsumer,
  type PipelineStage,
  type ScheduledTask,
} from './deployment/pipeline.ts';

export type { PipelineStage, PipelineStageName };
/** The environment variable holding each stage's queue URL, e.g. PDF_FETCH_QUEUE_URL. */
export { queueUrlSetting, stageSettings };
export type { AuthMode, HttpMethod };
export type { Access, AiUse, BucketPrefix } from './deployment/access.ts';
export { PDF_COPY_TMP_MB } from './deployment/access.ts';
export { pipelineStages, webhookDelivery };

export interface HttpRoute extends HttpRouteSettings, HttpDeployment {}

/** Every domain's route definitions, by name. */
const domainRoutes = [
  accountExportRoutes,
  apiKeyRoutes,
  chatRoutes,
  collectionRoutes,
  completionRoutes,
  erasureRoutes,
  fileRoutes,
  mcpRoutes,
  orderRoutes,
  paymentRoutes,
  productRoutes,
  retrievalRoutes,
  sharingRoutes,
  usageRoutes,
  userRoutes,
  webhookRoutes,
] satisfies RouteDefinitions[];
const routeDefinitions = {
  ...accountExportRoutes,
  ...apiKeyRoutes,
  ...chatRoutes,
  ...collectionRoutes,
  ...completionRoutes,
  ...erasureRoutes,
  ...fileRoutes,
  ...mcpRoutes,
  ...orderRoutes,
  ...paymentRoutes,
  ...productRoutes,
  ...retrievalRoutes,
  ...sharingRoutes,
  ...usageRoutes,
  ...userRoutes,
  ...webhookRoutes,
} as const;
type Definitions = typeof routeDefinitions;
if (Object.keys(routeDefinitions).length !== domainRoutes.reduce((n, routes) => n + Object.keys(routes).length, 0)) {
  throw new Error('Two domains define a route of the same name');
}

// Each definition has its deployment and each deployment its definition (the compiler says which
// is missing); the deployment's order is the manifest's.
const deployments: { [K in keyof Definitions]: HttpDeployment } & Record<
  Exclude<keyof typeof httpDeployments, keyof Definitions>,
  never
> = httpDeployments;

type Deployments = typeof httpDeployments;
export const httpRoutes = Object.fromEntries(
  Object.entries(deployments).map(([name, deployment]) => [
    name,
    { ...routeDefinitions[name as keyof Definitions], ...deployment },
  ]),
) as { [K in keyof Definitions]: Definitions[K] & Deployments[K] };

export interface ManifestFunction {
  name: string;
  entry: string;
  /** `dlq`: a dead-letter consumer (deadLetterConsumers); `schedule`: a scheduled task. */
  kind: 'http' | 'queue' | 'dlq' | 'schedule';
  timeoutSeconds: number;
  memoryMb: number;
  /** The function's /tmp (MB), when more than Lambda's 512. */
  tmpMb?: number;
  access: Access;
}

/** An HTTP route's limits unless it sets its own (API Gateway's integration timeout is 29 s). */
export const DEFAULT_HTTP_TIMEOUT_SECONDS = 29;
export const DEFAULT_HTTP_MEMORY_MB = 1024;

/** A stage's queue must stay invisible while its consumer may still be working on it (AWS advises 6 × the function timeout). */
export const VISIBILITY_TIMEOUT_FACTOR = 6;
export const visibilityTimeoutSeconds = (stage: Pick<PipelineStage, 'timeoutSeconds'>) =>
  stage.timeoutSeconds * VISIBILITY_TIMEOUT_FACTOR;

const entryOf = (name: string) => `functions/${name}.ts`;

export const httpRouteList = Object.entries(httpRoutes).map(([name, route]) => ({
  name,
  entry: entryOf(name),
  ...(route as HttpRoute),
}));

export const pipelineStageList = Object.entries(pipelineStages).map(([name, stage]) => ({
  name: name as PipelineStageName,
  entry: entryOf(name),
  ...(stage as PipelineStage),
}));

export const deadLetterConsumerList = Object.entries(deadLetterConsumers).map(([name, c]) => ({
  name,
  entry: entryOf(name),
  ...(c as DeadLetterConsumer),
}));

export const scheduledTaskList = Object.entries(scheduledTasks).map(([name, t]) => ({
  name,
  entry: entryOf(name),
  ...(t as ScheduledTask),
}));

/** Every Lambda function: HTTP, pipeline, dead-letter consumers and scheduled tasks alike. */
export const manifestFunctions: ManifestFunction[] = [
  ...httpRouteList.map((r) => ({
    name: r.name,
    entry: r.entry,
    kind: 'http' as const,
    timeoutSeconds: r.timeoutSeconds ?? DEFAULT_HTTP_TIMEOUT_SECONDS,
    memoryMb: r.memoryMb ?? DEFAULT_HTTP_MEMORY_MB,
    tmpMb: 'tmpMb' in r ? r.tmpMb : undefined,
    access: 'keyScope' in r ? { ...r.access, apiKeys: true } : r.access,
  })),
  ...pipelineStageList.map((s) => ({
    name: s.name,
    entry: s.entry,
    kind: 'queue' as const,
    timeoutSeconds: s.timeoutSeconds,
    memoryMb: s.memoryMb,
    tmpMb: 'tmpMb' in s ? s.tmpMb : undefined,
    access: s.access,
  })),
  ...deadLetterConsumerList.map((c) => ({
    name: c.name,
    entry: c.entry,
    kind: 'dlq' as const,
    timeoutSeconds: c.timeoutSeconds,
    memoryMb: c.memoryMb,
    access: c.access,
  })),
  {
    name: webhookDelivery.name,
    entry: webhookDelivery.entry,
    kind: 'queue' as const,
    timeoutSeconds: webhookDelivery.timeoutSeconds,
    memoryMb: webhookDelivery.memoryMb,
    access: webhookDelivery.access,
  },
  ...scheduledTaskList.map((t) => ({
    name: t.name,
    entry: t.entry,
    kind: 'schedule' as const,
    timeoutSeconds: t.timeoutSeconds,
    memoryMb: t.memoryMb,
    access: t.access,
  })),
];
