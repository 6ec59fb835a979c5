import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { nextCursorHeader } from '#shared/http/pagination.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import { toEmbeddingsData } from '#shared/files/file-view.ts';
import { listUploadsQuery } from '#shared/files/schemas.ts';

// GET /upload: the caller's files with their status, newest first, paged (x-next-cursor).
const files = new FileRepository(dynamo(), tableName());

export const handler = httpHandler(httpRoutes['list-uploads'], { query: listUploadsQuery }, async ({ query, user }) => {
  const page = await files.listByUser(user.id, query);
  return { data: page.items.map(toEmbeddingsData), headers: nextCursorHeader(page.lastKey) };
});
