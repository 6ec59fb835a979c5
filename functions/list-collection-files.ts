import { collectionRoutes } from '#shared/collections/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { collectionDeps } from '#shared/collections/collection-deps.ts';
import { pageResponse } from '#shared/http/pagination.ts';
import { listCollectionFiles } from '#shared/collections/collection-service.ts';
import { collectionParams, listCollectionsQuery } from '#shared/collections/schemas.ts';

// GET /collections/{id}/files: the files of one of the caller's collections with their status, paged.

const deps = collectionDeps(config(), systemClock);

export const handler = httpHandler(
  collectionRoutes['list-collection-files'],
  { params: collectionParams, query: listCollectionsQuery },
  async ({ params, query, user }) =>
    pageResponse(await listCollectionFiles(deps, { userId: user.id, collectionId: params.id, ...query })),
);
