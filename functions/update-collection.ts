import { collectionRoutes } from '#shared/collections/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { CollectionRepository } from '#shared/collections/collection-repository.ts';
import { renameCollection } from '#shared/collections/collection-service.ts';
import { collectionParams, updateCollectionBody } from '#shared/collections/schemas.ts';

// PUT /collections/{id}: renames one of the caller's collections.

const deps = { collections: new CollectionRepository(dynamo(), tableName()), clock: systemClock };

export const handler = httpHandler(
  collectionRoutes['update-collection'],
  { params: collectionParams, body: updateCollectionBody },
  async ({ params, body, user }) => ({
    message: 'Collection updated',
    data: await renameCollection(deps, { userId: user.id, collectionId: params.id, name: body.name }),
  }),
);
