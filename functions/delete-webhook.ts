import { webhookRoutes } from '#shared/webhooks/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { done } from '#shared/http/done.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { webhookDeps } from '#shared/webhooks/webhook-deps.ts';
import { deleteEndpoint } from '#shared/webhooks/webhook-service.ts';
import { webhookParams } from '#shared/webhooks/schemas.ts';

// DELETE /me/webhooks/{webhookId}: one of the caller's endpoints, and its delivery log.

const deps = webhookDeps(config(), systemClock);

export const handler = httpHandler(
  webhookRoutes['delete-webhook'],
  { params: webhookParams },
  ({ params: { webhookId }, user }) =>
    done(deleteEndpoint(deps, { userId: user.id, endpointId: webhookId }), { id: webhookId }),
);
