import type { RouteDefinitions } from '../http/route.ts';

// What the routes of this domain are (the HTTP layer reads them); what their deployment gets is
// infra's (infra/deployment/, by function name).

export const accountExportRoutes = {
  'create-export': {
    method: 'POST',
    path: '/me/export',
    auth: 'user',
    shape: 'envelope',
  },
  'get-export': {
    method: 'GET',
    path: '/me/export/{exportId}',
    auth: 'user',
    shape: 'envelope',
  },
} as const satisfies RouteDefinitions;
