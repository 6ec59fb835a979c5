import { collectionRoutes } from '#shared/collections/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { CollectionRepository } from '#shared/collections/collection-repository.ts';
import { addFileToCollection, collectionSettings } from '#shared/collections/collection-service.ts';
import { collectionFileParams } from '#shared/collections/schemas.ts';
import { FileRepository } from '#shared/files/file-repository.ts';

// PUT /collections/{id}/files/{fileId}: puts one of the caller's files in one of their collections.

const deps = {
  collections: new CollectionRepository(dynamo(), tableName()),
  files: new FileRepository(dynamo(), tableName()),
  clock: systemClock,
  settings: collectionSettings(config()),
};

export const handler = httpHandler(
  collectionRoutes['add-collection-file'],
  { params: collectionFileParams },
  async ({ params, user }) => {
    const input = { userId: user.id, collectionId: params.id, fileId: params.fileId };
    const added = await addFileToCollection(deps, input);
    return { message: 'File in collection', data: { collectionId: params.id, fileId: params.fileId, added } };
  },
);
