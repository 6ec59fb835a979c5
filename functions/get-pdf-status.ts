import { fileRoutes } from '#shared/files/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import { fileStatus } from '#shared/files/file-status.ts';
import { WaitingQueue } from '#shared/limits/waiting-queue.ts';
import { fileIdParams } from '#shared/files/schemas.ts';

// GET /message/pdf/{fileId}: status, stage, counts and, on failure, the typed reason.

const deps = { files: new FileRepository(dynamo(), tableName()), waiting: new WaitingQueue(dynamo(), tableName()) };

export const handler = httpHandler(fileRoutes['get-pdf-status'], { params: fileIdParams }, ({ params, user }) =>
  fileStatus(deps, { userId: user.id, fileId: params.fileId }),
);
