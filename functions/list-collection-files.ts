import { collectionRoutes } from '#shared/collections/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { pageResponse } from '#shared/http/pagination.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { CollectionRepository } from '#shared/collections/collection-repository.ts';
import { listCollectionFiles } from '#shared/collections/collection-service.ts';
import { collectionParams, listCollectionsQuery } from '#shared/collections/schemas.ts';
import { FileRepository } from '#shared/files/file-repository.ts';

// GET /collections/{id}/files: the files of one of the caller's collections with their status, paged.

const deps = {
  collections: new CollectionRepository(dynamo(), tableName()),
  files: new FileRepository(dynamo(), tableName()),
};

export const handler = httpHandler(
  collectionRoutes['list-collection-files'],
  { params: collectionParams, query: listCollectionsQuery },
  async ({ params, query, user }) =>
    pageResponse(await listCollectionFiles(deps, { userId: user.id, collectionId: params.id, ...query })),
);
