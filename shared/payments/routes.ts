// What this domain's routes are, by function name: the fields of the HTTP layer's route
// (HttpRouteSettings, which infra/routes.ts checks each against; no import of shared/http here, which
// builds on the domains). What their functions get is the deployment's (infra/deployment/).

export const paymentRoutes = {
  // The payment provider's signed events (no sign-in: the signature over the raw body is checked).
  'payment-webhook': {
    method: 'POST',
    path: '/payments/webhook',
    auth: 'public',
    shape: 'envelope',
    success: { status: 200 },
  },
} as const;
