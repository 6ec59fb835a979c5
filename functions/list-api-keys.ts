import { apiKeyRoutes } from '#shared/auth/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { pageResponse } from '#shared/http/pagination.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ApiKeyRepository } from '#shared/auth/api-key-repository.ts';
import { listApiKeys } from '#shared/auth/api-keys.ts';
import { listApiKeysQuery } from '#shared/auth/schemas.ts';

// GET /me/api-keys: the caller's API keys, newest first, paged (x-next-cursor), without the keys.

const deps = { keys: new ApiKeyRepository(dynamo(), tableName()) };

export const handler = httpHandler(
  apiKeyRoutes['list-api-keys'],
  { query: listApiKeysQuery },
  async ({ query, user }) => pageResponse(await listApiKeys(deps, { userId: user.id, ...query })),
);
