import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { isoNow, systemClock } from '#shared/clock.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ChatRepository } from '#shared/chats/chat-repository.ts';
import { chatIdParams, updateChatBody } from '#shared/chats/schemas.ts';

// PUT /chat/{chatId}: rename (name or chatName), change the system message, deactivate or reactivate.
const chats = new ChatRepository(dynamo(), tableName());

export const handler = httpHandler(
  httpRoutes['update-chat'],
  { params: chatIdParams, body: updateChatBody },
  async ({ params, body: { chatName, ...changes }, user }) => ({
    message: 'Chat updated',
    // chatName (the field the responses use) is the same as name.
    data: await chats.update(
      params.chatId,
      user.id,
      { ...changes, name: changes.name ?? chatName },
      isoNow(systemClock),
    ),
  }),
);
