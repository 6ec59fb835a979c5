import { collectionRoutes } from '#shared/collections/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { CollectionRepository } from '#shared/collections/collection-repository.ts';
import { removeFileFromCollection } from '#shared/collections/collection-service.ts';
import { collectionFileParams } from '#shared/collections/schemas.ts';
import { FileRepository } from '#shared/files/file-repository.ts';

// DELETE /collections/{id}/files/{fileId}: takes a file out of one of the caller's collections.

const deps = {
  collections: new CollectionRepository(dynamo(), tableName()),
  files: new FileRepository(dynamo(), tableName()),
};

export const handler = httpHandler(
  collectionRoutes['remove-collection-file'],
  { params: collectionFileParams },
  async ({ params, user }) => {
    await removeFileFromCollection(deps, { userId: user.id, collectionId: params.id, fileId: params.fileId });
    return { message: 'File removed', data: { collectionId: params.id, fileId: params.fileId, removed: true } };
  },
);
