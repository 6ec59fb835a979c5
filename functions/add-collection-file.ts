import { collectionRoutes } from '#shared/collections/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { collectionDeps } from '#shared/collections/collection-deps.ts';
import { addFileToCollection } from '#shared/collections/collection-service.ts';
import { collectionFileParams } from '#shared/collections/schemas.ts';

// PUT /collections/{id}/files/{fileId}: puts one of the caller's files in one of their collections.

const deps = collectionDeps(config(), systemClock);

export const handler = httpHandler(
  collectionRoutes['add-collection-file'],
  { params: collectionFileParams },
  async ({ params: { id: collectionId, fileId }, user }) => ({
    collectionId,
    fileId,
    added: await addFileToCollection(deps, { userId: user.id, collectionId, fileId }),
  }),
);
