import { chatRoutes } from '#shared/chats/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { pageResponse } from '#shared/http/pagination.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { SearchIndex } from '#shared/chats/search/search-index.ts';
import { searchChats } from '#shared/chats/search/search-service.ts';
import { searchQuery } from '#shared/chats/requests.ts';

// GET /chat/search?q=: the caller's chats whose name or messages match, newest first, paged (x-next-cursor).

const deps = { search: new SearchIndex(dynamo(), tableName()) };

export const handler = httpHandler(chatRoutes['search-chats'], { query: searchQuery }, async ({ query, user }) =>
  pageResponse(await searchChats(deps, { userId: user.id, ...query })),
);
