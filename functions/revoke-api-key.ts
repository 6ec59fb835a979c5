import { apiKeyRoutes } from '#shared/auth/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { done } from '#shared/http/done.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ApiKeyRepository } from '#shared/auth/api-key-repository.ts';
import { revokeApiKey } from '#shared/auth/api-keys.ts';
import { apiKeyParams } from '#shared/auth/schemas.ts';

// DELETE /me/api-keys/{id}: the key is refused from the next request on, by every function.

const deps = { keys: new ApiKeyRepository(dynamo(), tableName()) };

export const handler = httpHandler(
  apiKeyRoutes['revoke-api-key'],
  { params: apiKeyParams },
  ({ params: { id }, user }) => done(revokeApiKey(deps, { userId: user.id, id }), { id }, 'revoked'),
);
