import type { RouteDefinitions } from '../http/route.ts';

// What the routes of this domain are (the HTTP layer reads them); what their deployment gets is
// infra's (infra/deployment/, by function name).

export const usageRoutes = {
  'get-me': {
    method: 'GET',
    path: '/me',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
  },
} as const satisfies RouteDefinitions;
