import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { fileIdParams } from '#shared/files/schemas.ts';
import { deleteUpload } from '#shared/files/upload-service.ts';
import { uploadDeps } from '#shared/files/upload-deps.ts';
import { configuredVectorStore } from '#shared/retrieval/vector-store.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';

// DELETE /upload/{fileId}: the file's objects, chunks, attachments and record (owner only).
const deps = uploadDeps(config(), systemClock, configuredVectorStore(config()));

export const handler = httpHandler(httpRoutes['delete-upload'], { params: fileIdParams }, async ({ params, user }) => {
  await deleteUpload(deps, { userId: user.id, fileId: params.fileId });
  return { message: 'File deleted', data: { fileId: params.fileId, deleted: true } };
});
