import { collectionRoutes } from '#shared/collections/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { done } from '#shared/http/done.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { collectionDeps } from '#shared/collections/collection-deps.ts';
import { removeFileFromCollection } from '#shared/collections/collection-service.ts';
import { collectionFileParams } from '#shared/collections/schemas.ts';

// DELETE /collections/{id}/files/{fileId}: takes a file out of one of the caller's collections.

const deps = collectionDeps(config(), systemClock);

export const handler = httpHandler(
  collectionRoutes['remove-collection-file'],
  { params: collectionFileParams },
  ({ params: { id: collectionId, fileId }, user }) =>
    done(
      removeFileFromCollection(deps, { userId: user.id, collectionId, fileId }),
      { collectionId, fileId },
      'removed',
    ),
);
