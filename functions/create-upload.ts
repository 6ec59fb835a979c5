import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { config } from '#shared/config.ts';
import { dynamo, s3Client, tableName } from '#shared/clients.ts';
import { AttachmentRepository } from '#shared/files/attachment-repository.ts';
import { ChunkRepository } from '#shared/files/chunk-repository.ts';
import { FileRepository } from '#shared/files/file-repository.ts';
import { createUploadBody } from '#shared/files/schemas.ts';
import { FileStorage } from '#shared/files/storage.ts';
import { createUpload, type UploadDeps } from '#shared/files/upload-service.ts';

// POST /upload: a file record and presigned PUT/GET URLs for the PDF.
const c = config();
const deps: UploadDeps = {
  files: new FileRepository(dynamo(), tableName()),
  chunks: new ChunkRepository(dynamo(), tableName()),
  attachments: new AttachmentRepository(dynamo(), tableName()),
  storage: new FileStorage(s3Client(), c.BUCKET_NAME ?? ''),
  s3: s3Client(),
  settings: { maxBytes: c.PDF_MAX_BYTES, urlTtlSeconds: c.UPLOAD_URL_TTL_SECONDS },
};

export const handler = httpHandler(httpRoutes['create-upload'], { body: createUploadBody }, async ({ body, user }) => ({
  statusCode: 201,
  message: 'Upload created',
  data: await createUpload(deps, user.id, body),
}));
