import '#shared/config/auth.ts';
import { apiKeyRoutes } from '#shared/auth/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ApiKeyRepository } from '#shared/auth/api-key-repository.ts';
import { createApiKey } from '#shared/auth/api-keys.ts';
import { createApiKeyBody } from '#shared/auth/schemas.ts';

// POST /me/api-keys: a new API key for a program, shown this once.

const deps = {
  keys: new ApiKeyRepository(dynamo(), tableName()),
  clock: systemClock,
  maxPerUser: config().API_KEYS_MAX_PER_USER,
};

export const handler = httpHandler(apiKeyRoutes['create-api-key'], { body: createApiKeyBody }, ({ body, user }) =>
  createApiKey(deps, { userId: user.id, ...body }),
);
