import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { nextCursorHeader } from '#shared/http/pagination.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ChatRepository } from '#shared/chats/chat-repository.ts';
import { MessageRepository } from '#shared/chats/message-repository.ts';
import { chatIdParams, listQuery } from '#shared/chats/schemas.ts';

// GET /chat/{chatId}/messages: the caller's chat's messages in sequence order, paged.
const chats = new ChatRepository(dynamo(), tableName());
const messages = new MessageRepository(dynamo(), tableName());

export const handler = httpHandler(
  httpRoutes['list-messages'],
  { params: chatIdParams, query: listQuery },
  async ({ params, query, user }) => {
    await chats.getOwned(params.chatId, user.id); // a stranger's chat is 404
    const page = await messages.list(params.chatId, query);
    return { data: page.items, headers: nextCursorHeader(page.lastKey) };
  },
);
