// What this domain's routes are, by function name: the fields of the HTTP layer's route
// (HttpRouteSettings, which infra/routes.ts checks each against; no import of shared/http here, which
// builds on the domains). What their functions get is the deployment's (infra/deployment/).

export const chatRoutes = {
  'create-chat': {
    method: 'POST',
    path: '/chat',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'chat',
    success: { status: 201, message: 'Chat created' },
  },
  'list-chats': {
    method: 'GET',
    path: '/chat',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
  },
  // A literal segment beside {chatId}: API Gateway and the local gateway match it first, wherever it
  // stands in the manifest.
  'search-chats': {
    method: 'GET',
    path: '/chat/search',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
  },
  'get-chat': {
    method: 'GET',
    path: '/chat/{chatId}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
    success: { status: 200 },
  },
  'update-chat': {
    method: 'PUT',
    path: '/chat/{chatId}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'chat',
    success: { status: 200, message: 'Chat updated' },
  },
  'delete-chat': {
    method: 'DELETE',
    path: '/chat/{chatId}',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'chat',
    success: { status: 200, message: 'Chat deleted' },
  },
  'list-messages': {
    method: 'GET',
    path: '/chat/{chatId}/messages',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
  },
  // Streams (Lambda response streaming) when asked to.
  'send-message': {
    method: 'POST',
    path: '/message/logged-in',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'chat',
    streaming: true,
    rateLimit: 'messages',
  },
  // A new reply to a stored prompt (a sibling of the one regenerated): what send-message does, but the prompt.
  'regenerate-reply': {
    method: 'POST',
    path: '/chat/{chatId}/messages/{messageId}/regenerate',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'chat',
    streaming: true,
    rateLimit: 'messages',
  },
  // A streamed reply outlives its connection: resumed from the table (its streams open at once are
  // limited per reply and per user), or stopped wherever it is generated.
  'follow-reply': {
    method: 'GET',
    path: '/chat/{chatId}/messages/{messageId}/stream',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'read',
    streaming: true,
    rateLimit: 'follows',
  },
  'stop-reply': {
    method: 'POST',
    path: '/chat/{chatId}/messages/{messageId}/stop',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'chat',
    success: { status: 200, message: 'Reply stopped' },
  },
  // The owner's rating of an ai reply: set (replacing any) or removed.
  'put-feedback': {
    method: 'PUT',
    path: '/chat/{chatId}/messages/{messageId}/feedback',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'chat',
    success: { status: 200, message: 'Feedback saved' },
  },
  'delete-feedback': {
    method: 'DELETE',
    path: '/chat/{chatId}/messages/{messageId}/feedback',
    auth: 'user',
    shape: 'envelope',
    keyScope: 'chat',
    success: { status: 200, message: 'Feedback removed' },
  },
} as const;
