import { collectionRoutes } from '#shared/collections/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { collectionDeps } from '#shared/collections/collection-deps.ts';
import { renameCollection } from '#shared/collections/collection-service.ts';
import { collectionParams, updateCollectionBody } from '#shared/collections/schemas.ts';

// PUT /collections/{id}: renames one of the caller's collections.

const deps = collectionDeps(config(), systemClock);

export const handler = httpHandler(
  collectionRoutes['update-collection'],
  { params: collectionParams, body: updateCollectionBody },
  ({ params, body, user }) => renameCollection(deps, { userId: user.id, collectionId: params.id, name: body.name }),
);
