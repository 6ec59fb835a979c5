import { chatRoutes } from '#shared/chats/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { chatRepositories } from '#shared/chats/repositories.ts';
import { updateChat } from '#shared/chats/conversations/chat-service.ts';
import { chatIdParams, updateChatBody } from '#shared/chats/requests.ts';

// PUT /chat/{chatId}: rename (name or chatName), change the system message, deactivate or
// reactivate, switch the active branch.

const deps = { ...chatRepositories(dynamo(), tableName()), clock: systemClock };

export const handler = httpHandler(
  chatRoutes['update-chat'],
  { params: chatIdParams, body: updateChatBody },
  ({ params, body, user }) => updateChat(deps, { userId: user.id, chatId: params.chatId, changes: body }),
);
