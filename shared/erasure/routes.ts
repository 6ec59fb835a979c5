import type { RouteDefinitions } from '../http/route.ts';

// What the routes of this domain are (the HTTP layer reads them); what their deployment gets is
// infra's (infra/deployment/, by function name).

export const erasureRoutes = {
  'delete-me': {
    method: 'DELETE',
    path: '/me',
    auth: 'user',
    shape: 'envelope',
  },
} as const satisfies RouteDefinitions;
