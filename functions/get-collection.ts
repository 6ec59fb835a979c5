import { collectionRoutes } from '#shared/collections/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { CollectionRepository } from '#shared/collections/collection-repository.ts';
import { getCollection } from '#shared/collections/collection-service.ts';
import { collectionParams } from '#shared/collections/schemas.ts';

// GET /collections/{id}: one of the caller's collections.

const deps = { collections: new CollectionRepository(dynamo(), tableName()) };

export const handler = httpHandler(
  collectionRoutes['get-collection'],
  { params: collectionParams },
  async ({ params, user }) => ({
    data: await getCollection(deps, { userId: user.id, collectionId: params.id }),
  }),
);
