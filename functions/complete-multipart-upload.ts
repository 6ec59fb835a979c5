import { fileRoutes } from '#shared/files/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { completeMultipartBody, fileIdParams } from '#shared/files/schemas.ts';
import { completeMultipartUpload } from '#shared/files/multipart-upload.ts';
import { uploadDeps } from '#shared/files/upload-deps.ts';
import { configuredVectorStore } from '#shared/retrieval/vector-store.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';

// POST /upload/{fileId}/complete: the parts' ETags make the object.

const deps = uploadDeps(config(), systemClock, configuredVectorStore(config()));

export const handler = httpHandler(
  fileRoutes['complete-multipart-upload'],
  { params: fileIdParams, body: completeMultipartBody },
  ({ params, body, user }) => completeMultipartUpload(deps, { userId: user.id, fileId: params.fileId, body }),
);
