import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ApiKeyRepository } from '#shared/auth/api-key-repository.ts';
import { listApiKeys } from '#shared/auth/api-keys.ts';

// GET /me/api-keys: the caller's API keys, without the keys.

const deps = { keys: new ApiKeyRepository(dynamo(), tableName()) };

export const handler = httpHandler(httpRoutes['list-api-keys'], {}, async ({ user }) => ({
  data: await listApiKeys(deps, user.id),
}));
