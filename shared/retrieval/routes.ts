// What this domain's routes are, by function name: the fields of the HTTP layer's route
// (HttpRouteSettings, which infra/routes.ts checks each against; no import of shared/http here, which
// builds on the domains). What their functions get is the deployment's (infra/deployment/).

export const retrievalRoutes = {
  'search-files': {
    method: 'POST',
    path: '/search',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'search',
    rateLimit: 'messages',
    success: { status: 200, message: 'Passages found' },
  },
} as const;
