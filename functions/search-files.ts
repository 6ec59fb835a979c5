import { retrievalRoutes } from '#shared/retrieval/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { searchDeps } from '#shared/retrieval/search-deps.ts';
import { searchFiles } from '#shared/retrieval/search.ts';
import { searchFilesBody } from '#shared/retrieval/schemas.ts';

// POST /search: passages across the caller's completed files (a collection's, some, or all).

const deps = await searchDeps(config(), systemClock);

export const handler = httpHandler(retrievalRoutes['search-files'], { body: searchFilesBody }, ({ body, user }) =>
  searchFiles(deps, { userId: user.id, ...body }),
);
