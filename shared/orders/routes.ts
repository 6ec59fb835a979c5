// What this domain's routes are, by function name: the fields of the HTTP layer's route
// (HttpRouteSettings, which infra/routes.ts checks each against; no import of shared/http here, which
// builds on the domains). What their functions get is the deployment's (infra/deployment/).

export const orderRoutes = {
  // Bare bodies and `{ message }` errors (the commerce side of the API).
  'create-order': {
    method: 'POST',
    path: '/orders',
    auth: 'user',
    shape: 'bare',
    success: { status: 201 },
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
    success: { status: 200 },
  },
  'update-order': {
    method: 'PUT',
    path: '/orders/{id}',
    auth: 'admin',
    shape: 'bare',
    success: { status: 200 },
  },
} as const;
