// What this domain's routes are, by function name: the fields of the HTTP layer's route
// (HttpRouteSettings, which infra/routes.ts checks each against; no import of shared/http here, which
// builds on the domains). What their functions get is the deployment's (infra/deployment/).

export const webhookRoutes = {
  'create-webhook': {
    method: 'POST',
    path: '/me/webhooks',
    auth: 'user',
    shape: 'envelope',
    success: { status: 201, message: 'Webhook endpoint created: keep its secret, it is not shown again' },
  },
  'list-webhooks': {
    method: 'GET',
    path: '/me/webhooks',
    auth: 'user',
    shape: 'envelope',
  },
  'delete-webhook': {
    method: 'DELETE',
    path: '/me/webhooks/{webhookId}',
    auth: 'user',
    shape: 'envelope',
    success: { status: 200, message: 'Webhook endpoint deleted' },
  },
  'list-webhook-deliveries': {
    method: 'GET',
    path: '/me/webhooks/{webhookId}/deliveries',
    auth: 'user',
    shape: 'envelope',
  },
  'test-webhook': {
    method: 'POST',
    path: '/me/webhooks/{webhookId}/test',
    auth: 'user',
    shape: 'envelope',
    success: { status: 202, message: 'Ping queued' },
  },
} as const;
