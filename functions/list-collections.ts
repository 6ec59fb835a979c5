import { collectionRoutes } from '#shared/collections/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { pageResponse } from '#shared/http/pagination.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { CollectionRepository } from '#shared/collections/collection-repository.ts';
import { listCollections } from '#shared/collections/collection-service.ts';
import { listCollectionsQuery } from '#shared/collections/schemas.ts';

// GET /collections: the caller's collections, newest first, paged (x-next-cursor).

const deps = { collections: new CollectionRepository(dynamo(), tableName()) };

export const handler = httpHandler(
  collectionRoutes['list-collections'],
  { query: listCollectionsQuery },
  async ({ query, user }) => pageResponse(await listCollections(deps, { userId: user.id, ...query })),
);
