import { collectionRoutes } from '#shared/collections/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { collectionDeps } from '#shared/collections/collection-deps.ts';
import { pageResponse } from '#shared/http/pagination.ts';
import { listCollections } from '#shared/collections/collection-service.ts';
import { listCollectionsQuery } from '#shared/collections/schemas.ts';

// GET /collections: the caller's collections, newest first, paged (x-next-cursor).

const deps = collectionDeps(config(), systemClock);

export const handler = httpHandler(
  collectionRoutes['list-collections'],
  { query: listCollectionsQuery },
  async ({ query, user }) => pageResponse(await listCollections(deps, { userId: user.id, ...query })),
);
