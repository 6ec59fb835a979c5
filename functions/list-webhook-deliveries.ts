import { webhookRoutes } from '#shared/webhooks/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { pageResponse } from '#shared/http/pagination.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { webhookDeps } from '#shared/webhooks/webhook-deps.ts';
import { listDeliveries } from '#shared/webhooks/webhook-service.ts';
import { listDeliveriesQuery, webhookParams } from '#shared/webhooks/schemas.ts';

// GET /me/webhooks/{webhookId}/deliveries: the endpoint's delivery log, newest first, paged (x-next-cursor).

const deps = webhookDeps(config(), systemClock);

export const handler = httpHandler(
  webhookRoutes['list-webhook-deliveries'],
  { params: webhookParams, query: listDeliveriesQuery },
  async ({ params, query, user }) =>
    pageResponse(await listDeliveries(deps, { userId: user.id, endpointId: params.webhookId, ...query })),
);
