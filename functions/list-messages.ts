import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { pageResponse } from '#shared/http/pagination.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ChatRepository } from '#shared/chats/chat-repository.ts';
import { listMessages } from '#shared/chats/chat-service.ts';
import { MessageRepository } from '#shared/chats/message-repository.ts';
import { chatIdParams, listQuery } from '#shared/chats/schemas.ts';

// GET /chat/{chatId}/messages: the caller's chat's messages in sequence order, paged.

const deps = {
  chats: new ChatRepository(dynamo(), tableName()),
  messages: new MessageRepository(dynamo(), tableName()),
};

export const handler = httpHandler(
  httpRoutes['list-messages'],
  { params: chatIdParams, query: listQuery },
  async ({ params, query, user }) =>
    pageResponse(await listMessages(deps, { userId: user.id, chatId: params.chatId, ...query })),
);
