import { fileRoutes } from '#shared/files/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { pageResponse } from '#shared/http/pagination.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import { listFiles } from '#shared/files/file-status.ts';
import { listUploadsQuery } from '#shared/files/schemas.ts';

// GET /upload: the caller's files with their status, newest first, paged (x-next-cursor).

const deps = { files: new FileRepository(dynamo(), tableName()) };

export const handler = httpHandler(fileRoutes['list-uploads'], { query: listUploadsQuery }, async ({ query, user }) =>
  pageResponse(await listFiles(deps, { userId: user.id, ...query })),
);
