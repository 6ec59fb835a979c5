import { fileRoutes } from '#shared/files/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { createUploadBody } from '#shared/files/schemas.ts';
import { createUpload } from '#shared/files/upload-service.ts';
import { uploadDeps } from '#shared/files/upload-deps.ts';
import { configuredVectorStore } from '#shared/retrieval/vector-store.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';

// POST /upload: a file record and presigned PUT/GET URLs for the PDF.
const deps = uploadDeps(config(), systemClock, configuredVectorStore(config()));

export const handler = httpHandler(fileRoutes['create-upload'], { body: createUploadBody }, ({ body, user }) =>
  createUpload(deps, { userId: user.id, upload: body }),
);
