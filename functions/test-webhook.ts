import { webhookRoutes } from '#shared/webhooks/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { webhookDeps } from '#shared/webhooks/webhook-deps.ts';
import { pingEndpoint } from '#shared/webhooks/webhook-service.ts';
import { webhookParams } from '#shared/webhooks/schemas.ts';

// POST /me/webhooks/{webhookId}/test: a ping, queued and delivered as any event (see the delivery log).

const deps = webhookDeps(config(), systemClock);

export const handler = httpHandler(webhookRoutes['test-webhook'], { params: webhookParams }, ({ params, user }) =>
  pingEndpoint(deps, { userId: user.id, endpointId: params.webhookId }),
);
