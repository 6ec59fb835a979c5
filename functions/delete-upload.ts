import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { config } from '#shared/config.ts';
import { dynamo, s3Client, tableName } from '#shared/clients.ts';
import { AttachmentRepository } from '#shared/files/attachment-repository.ts';
import { ChunkRepository } from '#shared/files/chunk-repository.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import { fileIdParams } from '#shared/files/schemas.ts';
import { FileStorage } from '#shared/files/storage.ts';
import { deleteUpload, type UploadDeps } from '#shared/files/upload-service.ts';

// DELETE /upload/{fileId}: the file's objects, chunks, attachments and record (owner only).
const c = config();
const deps: UploadDeps = {
  files: new FileRepository(dynamo(), tableName()),
  chunks: new ChunkRepository(dynamo(), tableName()),
  attachments: new AttachmentRepository(dynamo(), tableName()),
  storage: new FileStorage(s3Client(), c.BUCKET_NAME ?? ''),
  s3: s3Client(),
  settings: { maxBytes: c.PDF_MAX_BYTES, urlTtlSeconds: c.UPLOAD_URL_TTL_SECONDS },
};

export const handler = httpHandler(httpRoutes['delete-upload'], { params: fileIdParams }, async ({ params, user }) => {
  await deleteUpload(deps, user.id, params.fileId);
  return { message: 'File deleted', data: { fileId: params.fileId, deleted: true } };
});
