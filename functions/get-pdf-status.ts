import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import { pdfStatus } from '#shared/pdf/ingest-service.ts';
import { fileIdParams } from '#shared/files/schemas.ts';

// GET /message/pdf/{fileId}: status, stage, counts and, on failure, the typed reason.
const files = new FileRepository(dynamo(), tableName());

export const handler = httpHandler(
  httpRoutes['get-pdf-status'],
  { params: fileIdParams },
  async ({ params, user }) => ({
    data: await pdfStatus(files, user.id, params.fileId),
  }),
);
