import { collectionRoutes } from '#shared/collections/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { CollectionRepository } from '#shared/collections/collection-repository.ts';
import { deleteCollection } from '#shared/collections/collection-service.ts';
import { collectionParams } from '#shared/collections/schemas.ts';
import { FileRepository } from '#shared/files/file-repository.ts';

// DELETE /collections/{id}: deletes one of the caller's collections; its files stay.

const deps = {
  collections: new CollectionRepository(dynamo(), tableName()),
  files: new FileRepository(dynamo(), tableName()),
};

export const handler = httpHandler(
  collectionRoutes['delete-collection'],
  { params: collectionParams },
  async ({ params, user }) => {
    await deleteCollection(deps, { userId: user.id, collectionId: params.id });
    return { message: 'Collection deleted', data: { id: params.id, deleted: true } };
  },
);
