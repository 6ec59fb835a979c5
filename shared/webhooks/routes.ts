import type { RouteDefinitions } from '../http/route.ts';

// What the routes of this domain are (the HTTP layer reads them); what their deployment gets is
// infra's (infra/deployment/, by function name).

export const webhookRoutes = {
  'create-webhook': {
    method: 'POST',
    path: '/me/webhooks',
    auth: 'user',
    shape: 'envelope',
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
  },
} as const satisfies RouteDefinitions;
