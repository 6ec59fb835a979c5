import type { RouteDefinitions } from '../http/route.ts';

// What the routes of this domain are (the HTTP layer reads them); what their deployment gets is
// infra's (infra/deployment/, by function name).

export const apiKeyRoutes = {
  // Keys are managed with a service token only (no keyScope: a key cannot manage keys).
  'create-api-key': {
    method: 'POST',
    path: '/me/api-keys',
    auth: 'user',
    shape: 'envelope',
  },
  'list-api-keys': {
    method: 'GET',
    path: '/me/api-keys',
    auth: 'user',
    shape: 'envelope',
  },
  'revoke-api-key': {
    method: 'DELETE',
    path: '/me/api-keys/{id}',
    auth: 'user',
    shape: 'envelope',
  },
} as const satisfies RouteDefinitions;
