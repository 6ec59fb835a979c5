import type { RouteDefinitions } from '../http/route.ts';

// What the routes of this domain are (the HTTP layer reads them); what their deployment gets is
// infra's (infra/deployment/, by function name).

export const paymentRoutes = {
  // The payment provider's signed events (no sign-in: the signature over the raw body is checked).
  'payment-webhook': {
    method: 'POST',
    path: '/payments/webhook',
    auth: 'public',
    shape: 'envelope',
  },
} as const satisfies RouteDefinitions;
