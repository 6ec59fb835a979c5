import { collectionRoutes } from '#shared/collections/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { CollectionRepository } from '#shared/collections/collection-repository.ts';
import { collectionSettings, createCollection } from '#shared/collections/collection-service.ts';
import { createCollectionBody } from '#shared/collections/schemas.ts';

// POST /collections: a new collection of the caller's (201).

const deps = {
  collections: new CollectionRepository(dynamo(), tableName()),
  clock: systemClock,
  settings: collectionSettings(config()),
};

export const handler = httpHandler(
  collectionRoutes['create-collection'],
  { body: createCollectionBody },
  async ({ body, user }) => ({
    statusCode: 201,
    message: 'Collection created',
    data: await createCollection(deps, { userId: user.id, name: body.name }),
  }),
);
