import { fileRoutes } from '#shared/files/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { done } from '#shared/http/done.ts';
import { fileIdParams } from '#shared/files/schemas.ts';
import { deleteUpload } from '#shared/files/upload-service.ts';
import { uploadDeps } from '#shared/files/upload-deps.ts';
import { configuredVectorStore } from '#shared/retrieval/vector-store.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { dynamo, tableName } from '#shared/clients.ts';
import { CollectionRepository } from '#shared/collections/collection-repository.ts';
import { ingestQueueDeps } from '#shared/ingestion/pipeline-deps.ts';
import { releaseWaiting } from '#shared/ingestion/ingest-queue.ts';

// DELETE /upload/{fileId}: the file's objects, chunks, vectors, attachments, memberships and record (owner only).
const settings = config();
const ingestQueues = ingestQueueDeps(settings, systemClock);
const deps = {
  ...uploadDeps(settings, systemClock, configuredVectorStore(settings)),
  collections: new CollectionRepository(dynamo(), tableName()),
  releaseWaiting: (userId: string) => releaseWaiting(ingestQueues, userId),
};

export const handler = httpHandler(
  fileRoutes['delete-upload'],
  { params: fileIdParams },
  ({ params: { fileId }, user }) => done(deleteUpload(deps, { userId: user.id, fileId }), { fileId }),
);
