import type { RouteDefinitions } from '../http/route.ts';

// What the routes of this domain are (the HTTP layer reads them); what their deployment gets is
// infra's (infra/deployment/, by function name).

export const completionRoutes = {
  // OpenAI's bodies, chunks and errors (docs/DECISIONS.md "OpenAI-compatible API").
  'openai-list-models': {
    method: 'GET',
    path: '/openai/models',
    auth: 'user',
    shape: 'openai',
    keyScope: 'read',
  },
  'openai-chat-completions': {
    method: 'POST',
    path: '/openai/chat/completions',
    auth: 'user',
    shape: 'openai',
    keyScope: 'chat',
    streaming: true,
    rateLimit: 'messages',
  },
} as const satisfies RouteDefinitions;
