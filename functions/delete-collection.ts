import { collectionRoutes } from '#shared/collections/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { done } from '#shared/http/done.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { collectionDeps } from '#shared/collections/collection-deps.ts';
import { deleteCollection } from '#shared/collections/collection-service.ts';
import { collectionParams } from '#shared/collections/schemas.ts';

// DELETE /collections/{id}: deletes one of the caller's collections; its files stay.

const deps = collectionDeps(config(), systemClock);

export const handler = httpHandler(
  collectionRoutes['delete-collection'],
  { params: collectionParams },
  ({ params, user }) => done(deleteCollection(deps, { userId: user.id, collectionId: params.id }), { id: params.id }),
);
