import * as z from '../zod.ts';
import { settingsPiece } from './core.ts';
import { int } from './fields.ts';

// Uploads: presigned URLs, multipart parts, each user's storage.

export const uploadSettings = settingsPiece({
  // Lifetime of the presigned upload/download URLs of POST /upload.
  UPLOAD_URL_TTL_SECONDS: z._default(int(60, 7 * 24 * 3600), 3600),
  // The part size POST /upload/multipart cuts a PDF into (S3: at least 5 MiB but the last part,
  // at most 10,000 parts).
  UPLOAD_PART_BYTES: z._default(int(5 * 1024 * 1024, 5 * 1024 * 1024 * 1024), 16 * 1024 * 1024),
  // What one user's uploads may hold in the bucket, in bytes (shared/files/storage-quota.ts; 0: no limit).
  USER_STORAGE_MAX_BYTES: z._default(int(0, 2 ** 50), 1024 * 1024 * 1024),
});
