import { webhookRoutes } from '#shared/webhooks/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { pageResponse } from '#shared/http/pagination.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { webhookDeps } from '#shared/webhooks/webhook-deps.ts';
import { listEndpoints } from '#shared/webhooks/webhook-service.ts';
import { listWebhooksQuery } from '#shared/webhooks/schemas.ts';

// GET /me/webhooks: the caller's endpoints, without their secrets, paged (x-next-cursor).

const deps = webhookDeps(config(), systemClock);

export const handler = httpHandler(
  webhookRoutes['list-webhooks'],
  { query: listWebhooksQuery },
  async ({ query, user }) => pageResponse(await listEndpoints(deps, { userId: user.id, ...query })),
);
