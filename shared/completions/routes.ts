// What this domain's routes are, by function name: the fields of the HTTP layer's route
// (HttpRouteSettings, which infra/routes.ts checks each against; no import of shared/http here, which
// builds on the domains). What their functions get is the deployment's (infra/deployment/).

export const completionRoutes = {
  // OpenAI's bodies, chunks and errors (docs/DECISIONS.md "OpenAI-compatible API").
  'openai-list-models': {
    method: 'GET',
    path: '/openai/models',
    auth: 'user',
    shape: 'openai',
    keyScope: 'read',
    success: { status: 200 },
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
} as const;
