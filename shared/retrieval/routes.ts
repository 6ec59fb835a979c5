import type { RouteDefinitions } from '../http/route.ts';

// What the routes of this domain are (the HTTP layer reads them); what their deployment gets is
// infra's (infra/deployment/, by function name).

export const retrievalRoutes = {
  'search-files': {
    method: 'POST',
    path: '/search',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'search',
    rateLimit: 'messages',
  },
} as const satisfies RouteDefinitions;
