import { fileRoutes } from '#shared/files/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { createUploadBody } from '#shared/files/schemas.ts';
import { createMultipartUpload } from '#shared/files/multipart-upload.ts';
import { uploadDeps } from '#shared/files/upload-deps.ts';
import { configuredVectorStore } from '#shared/retrieval/vector-store.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';

// POST /upload/multipart: a file record and a presigned PUT per part of a large PDF.

const deps = uploadDeps(config(), systemClock, configuredVectorStore(config()));

export const handler = httpHandler(
  fileRoutes['create-multipart-upload'],
  { body: createUploadBody },
  ({ body, user }) => createMultipartUpload(deps, { userId: user.id, upload: body }),
);
