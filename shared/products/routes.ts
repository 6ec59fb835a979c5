// What this domain's routes are, by function name: the fields of the HTTP layer's route
// (HttpRouteSettings, which infra/routes.ts checks each against; no import of shared/http here, which
// builds on the domains). What their functions get is the deployment's (infra/deployment/).

export const productRoutes = {
  // Bare bodies and `{ message }` errors (the commerce side of the API).
  'create-product': {
    method: 'POST',
    path: '/products',
    auth: 'admin',
    shape: 'bare',
    success: { status: 201 },
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
    success: { status: 200 },
  },
  'update-product': {
    method: 'PATCH',
    path: '/products/{id}',
    auth: 'admin',
    shape: 'bare',
    success: { status: 200 },
  },
  'delete-product': {
    method: 'DELETE',
    path: '/products/{id}',
    auth: 'admin',
    shape: 'bare',
    success: { status: 204 },
  },
} as const;
