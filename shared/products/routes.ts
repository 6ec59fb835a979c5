import type { RouteDefinitions } from '../http/route.ts';

// What the routes of this domain are (the HTTP layer reads them); what their deployment gets is
// infra's (infra/deployment/, by function name).

export const productRoutes = {
  // Bare bodies and `{ message }` errors (the commerce side of the API).
  'create-product': {
    method: 'POST',
    path: '/products',
    auth: 'admin',
    shape: 'bare',
  },
  'list-products': {
    method: 'GET',
    path: '/products',
    auth: 'user',
    shape: 'bare',
  },
  'get-product': {
    method: 'GET',
    path: '/products/{id}',
    auth: 'user',
    shape: 'bare',
  },
  'update-product': {
    method: 'PATCH',
    path: '/products/{id}',
    auth: 'admin',
    shape: 'bare',
  },
  'delete-product': {
    method: 'DELETE',
    path: '/products/{id}',
    auth: 'admin',
    shape: 'bare',
  },
} as const satisfies RouteDefinitions;
