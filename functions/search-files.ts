import { retrievalRoutes } from '#shared/retrieval/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { dynamo } from '#shared/clients.ts';
import { s3Client } from '#shared/s3-client.ts';
import { retrieverFor } from '#shared/retrieval/retrieve.ts';
import { searchDeps } from '#shared/retrieval/search-deps.ts';
import { searchFiles } from '#shared/retrieval/search.ts';
import { searchFilesBody } from '#shared/retrieval/schemas.ts';

// POST /search: passages across the caller's completed files (a collection's, some, or all).

const settings = config();
const deps = await searchDeps(settings, systemClock, retrieverFor(settings, dynamo(), s3Client()));

export const handler = httpHandler(retrievalRoutes['search-files'], { body: searchFilesBody }, ({ body, user }) =>
  searchFiles(deps, { userId: user.id, ...body }),
);
