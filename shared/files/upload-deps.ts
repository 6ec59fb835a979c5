import { config } from '../config.ts';
import { bucketName, dynamo, tableName } from '../clients.ts';
import { s3Client } from '../s3-client.ts';
import { AttachmentRepository } from './attachment-repository.ts';
import { ChunkRepository } from './chunk-repository.ts';
import { FileRepository } from './file-repository.ts';
import { FileStorage } from './storage.ts';
import type { UploadDeps } from './upload-service.ts';

let cached: UploadDeps | undefined;

/** What the upload routes work with, created once per cold start. */
export function uploadDeps(): UploadDeps {
  if (!cached) {
    const c = config();
    cached = {
      files: new FileRepository(dynamo(), tableName()),
      chunks: new ChunkRepository(dynamo(), tableName()),
      attachments: new AttachmentRepository(dynamo(), tableName()),
      storage: new FileStorage(s3Client(), bucketName()),
      s3: s3Client(),
      settings: { maxBytes: c.PDF_MAX_BYTES, urlTtlSeconds: c.UPLOAD_URL_TTL_SECONDS },
    };
  }
  return cached;
}
