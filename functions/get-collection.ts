import { collectionRoutes } from '#shared/collections/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { collectionDeps } from '#shared/collections/collection-deps.ts';
import { getCollection } from '#shared/collections/collection-service.ts';
import { collectionParams } from '#shared/collections/schemas.ts';

// GET /collections/{id}: one of the caller's collections.

const deps = collectionDeps(config(), systemClock);

export const handler = httpHandler(
  collectionRoutes['get-collection'],
  { params: collectionParams },
  ({ params, user }) => getCollection(deps, { userId: user.id, collectionId: params.id }),
);
