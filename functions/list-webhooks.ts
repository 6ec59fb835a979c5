import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { webhookDeps } from '#shared/webhooks/webhook-deps.ts';
import { listEndpoints } from '#shared/webhooks/webhook-service.ts';

// GET /me/webhooks: the caller's endpoints, without their secrets.

const deps = webhookDeps(config(), systemClock);

export const handler = httpHandler(httpRoutes['list-webhooks'], {}, async ({ user }) => ({
  data: await listEndpoints(deps, { userId: user.id }),
}));
