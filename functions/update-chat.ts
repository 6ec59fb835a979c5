import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ChatRepository } from '#shared/chats/chat-repository.ts';
import { updateChat } from '#shared/chats/chat-service.ts';
import { chatIdParams, updateChatBody } from '#shared/chats/schemas.ts';

// PUT /chat/{chatId}: rename (name or chatName), change the system message, deactivate or reactivate.

const deps = { chats: new ChatRepository(dynamo(), tableName()), clock: systemClock };

export const handler = httpHandler(
  httpRoutes['update-chat'],
  { params: chatIdParams, body: updateChatBody },
  async ({ params, body, user }) => ({
    message: 'Chat updated',
    data: await updateChat(deps, { userId: user.id, chatId: params.chatId, changes: body }),
  }),
);
