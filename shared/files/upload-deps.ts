import '../config/pdf.ts';
import '../config/uploads.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { bucketName, dynamo } from '../clients.ts';
import { s3Client } from '../s3-client.ts';
import { AttachmentRepository } from './attachment-repository.ts';
import { ChunkRepository } from './chunk-repository.ts';
import { FileRepository } from './file-repository.ts';
import { UsageLedger } from '../limits/usage-ledger.ts';
import { UsageCounters } from '../limits/usage-counters.ts';
import { FileStorage } from './storage.ts';
import { StorageQuota } from './storage-quota.ts';
import type { FileVectors, UploadDeps } from './upload-service.ts';

/** What the upload routes work with, composed by each at its cold start. */
export function uploadDeps(config: Config, clock: Clock, vectors: FileVectors): UploadDeps {
  const storage = new FileStorage(s3Client(), bucketName());
  const counters = new UsageCounters(dynamo(), config.TABLE_NAME);
  return {
    files: new FileRepository(dynamo(), config.TABLE_NAME),
    chunks: new ChunkRepository(dynamo(), config.TABLE_NAME),
    attachments: new AttachmentRepository(dynamo(), config.TABLE_NAME),
    storage,
    vectors,
    quota: new StorageQuota(
      dynamo(),
      config.TABLE_NAME,
      counters,
      storage,
      { maxBytes: config.USER_STORAGE_MAX_BYTES },
      clock,
    ),
    usage: new UsageLedger(dynamo(), config.TABLE_NAME, clock),
    s3: s3Client(),
    settings: {
      maxBytes: config.PDF_MAX_BYTES,
      urlTtlSeconds: config.UPLOAD_URL_TTL_SECONDS,
      partBytes: config.UPLOAD_PART_BYTES,
    },
    clock,
  };
}
