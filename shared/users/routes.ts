import type { RouteDefinitions } from '../http/route.ts';

// What the routes of this domain are (the HTTP layer reads them); what their deployment gets is
// infra's (infra/deployment/, by function name).

export const userRoutes = {
  'sign-in': {
    method: 'POST',
    path: '/auth',
    auth: 'idp',
    shape: 'envelope',
  },
} as const satisfies RouteDefinitions;
