// What this domain's routes are, by function name: the fields of the HTTP layer's route
// (HttpRouteSettings, which infra/routes.ts checks each against; no import of shared/http here, which
// builds on the domains). What their functions get is the deployment's (infra/deployment/).

export const erasureRoutes = {
  'delete-me': {
    method: 'DELETE',
    path: '/me',
    auth: 'user',
    shape: 'envelope',
    success: { status: 202, message: 'Account erasure accepted' },
  },
} as const;
