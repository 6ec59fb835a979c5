import { webhookRoutes } from '#shared/webhooks/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { webhookDeps } from '#shared/webhooks/webhook-deps.ts';
import { createEndpoint } from '#shared/webhooks/webhook-service.ts';
import { createWebhookBody } from '#shared/webhooks/schemas.ts';

// POST /me/webhooks: registers an endpoint (its URL through the download guard); the secret is shown once.

const deps = webhookDeps(config(), systemClock);

export const handler = httpHandler(webhookRoutes['create-webhook'], { body: createWebhookBody }, ({ body, user }) =>
  createEndpoint(deps, { userId: user.id, ...body }),
);
