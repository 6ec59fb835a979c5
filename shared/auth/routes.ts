// What this domain's routes are, by function name: the fields of the HTTP layer's route
// (HttpRouteSettings, which infra/routes.ts checks each against; no import of shared/http here, which
// builds on the domains). What their functions get is the deployment's (infra/deployment/).

export const apiKeyRoutes = {
  // Keys are managed with a service token only (no keyScope: a key cannot manage keys).
  'create-api-key': {
    method: 'POST',
    path: '/me/api-keys',
    auth: 'user',
    shape: 'envelope',
    success: { status: 201, message: 'API key created: it is shown this once' },
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
    success: { status: 200, message: 'API key revoked' },
  },
} as const;
