import { chatRoutes } from '#shared/chats/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { pageResponse } from '#shared/http/pagination.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ChatRepository } from '#shared/chats/conversations/chat-repository.ts';
import { listMessages } from '#shared/chats/conversations/chat-service.ts';
import { MessageRepository } from '#shared/chats/conversations/message-repository.ts';
import { chatIdParams, listMessagesQuery } from '#shared/chats/requests.ts';

// GET /chat/{chatId}/messages: a branch of the caller's chat (the active one, or ?leaf=), root first, paged.

const deps = {
  chats: new ChatRepository(dynamo(), tableName()),
  messages: new MessageRepository(dynamo(), tableName()),
};

export const handler = httpHandler(
  chatRoutes['list-messages'],
  { params: chatIdParams, query: listMessagesQuery },
  async ({ params, query, user }) =>
    pageResponse(await listMessages(deps, { userId: user.id, chatId: params.chatId, ...query })),
);
