import type { RouteDefinitions } from '../http/route.ts';

// What the routes of this domain are (the HTTP layer reads them); what their deployment gets is
// infra's (infra/deployment/, by function name).

export const orderRoutes = {
  // Bare bodies and `{ message }` errors (the commerce side of the API).
  'create-order': {
    method: 'POST',
    path: '/orders',
    auth: 'user',
    shape: 'bare',
  },
  'list-orders': {
    method: 'GET',
    path: '/orders',
    auth: 'user',
    shape: 'bare',
  },
  'get-order': {
    method: 'GET',
    path: '/orders/{id}',
    auth: 'user',
    shape: 'bare',
  },
  'update-order': {
    method: 'PUT',
    path: '/orders/{id}',
    auth: 'admin',
    shape: 'bare',
  },
} as const satisfies RouteDefinitions;
