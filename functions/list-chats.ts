import { chatRoutes } from '#shared/chats/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { pageResponse } from '#shared/http/pagination.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { ChatRepository } from '#shared/chats/conversations/chat-repository.ts';
import { listChats } from '#shared/chats/conversations/chat-service.ts';
import { listQuery } from '#shared/chats/requests.ts';

// GET /chat: the caller's chats, newest first, paged (x-next-cursor).

const deps = { chats: new ChatRepository(dynamo(), tableName()) };

export const handler = httpHandler(chatRoutes['list-chats'], { query: listQuery }, async ({ query, user }) =>
  pageResponse(await listChats(deps, { userId: user.id, ...query })),
);
