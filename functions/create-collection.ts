import { collectionRoutes } from '#shared/collections/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { collectionDeps } from '#shared/collections/collection-deps.ts';
import { createCollection } from '#shared/collections/collection-service.ts';
import { createCollectionBody } from '#shared/collections/schemas.ts';

// POST /collections: a new collection of the caller's (201).

const deps = collectionDeps(config(), systemClock);

export const handler = httpHandler(
  collectionRoutes['create-collection'],
  { body: createCollectionBody },
  ({ body, user }) => createCollection(deps, { userId: user.id, name: body.name }),
);
