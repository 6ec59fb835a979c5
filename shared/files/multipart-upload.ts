import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { z } from 'zod/mini';
import { ConflictError, InvalidInputError } from '../errors.ts';
import { ownedFile } from './file-status.ts';
import type { completeMultipartBody, createUploadBody } from './schemas.ts';
import { newUploadRecord, type UploadDeps } from './upload-service.ts';

// Large PDFs (docs/DECISIONS.md "Multipart upload"): POST /upload/multipart opens an S3 multipart
// upload for the file and answers with a presigned PUT per part (UPLOAD_PART_BYTES each, the
// last one the rest; each part's length signed); the client PUTs the parts, keeps each answer's
// ETag and sends them to POST /upload/{fileId}/complete. DELETE /upload/{fileId} aborts an upload
// not completed. The file is then an ordinary upload: POST /message/pdf with its downloadUrl.

/** S3's most parts in one upload. */
const MAX_PARTS = 10_000;

/**
 * Steps: the part count (at most 10,000) → a new upload record (size limit, quota) whose S3
 * multipart upload is opened before the record is stored → presign a PUT per part and the GET.
 */
export async function createMultipartUpload(
  deps: UploadDeps,
  { userId, upload: body }: { userId: string; upload: z.infer<typeof createUploadBody> },
) {
  const { urlTtlSeconds, partBytes } = deps.settings;
  const partCount = Math.max(1, Math.ceil(body.size / partBytes));
  if (partCount > MAX_PARTS) {
    throw new InvalidInputError(`The file needs more than ${MAX_PARTS} parts of ${partBytes} bytes`, [
      { path: 'body.size', message: `Must be at most ${MAX_PARTS * partBytes}`, code: 'TOO_LARGE' },
    ]);
  }
  const bucket = deps.storage.bucket;
  const { record, key, now } = await newUploadRecord(deps, userId, body, async (objectKey) => {
    const created = await deps.s3.send(
      new CreateMultipartUploadCommand({ Bucket: bucket, Key: objectKey, ContentType: body.contentType }),
    );
    return { multipartUploadId: created.UploadId! };
  });
  const uploadId = record.multipartUploadId!;
  const parts = await Promise.all(
    Array.from({ length: partCount }, async (_, i) => {
      const partNumber = i + 1;
      const length = Math.min(partBytes, body.size - i * partBytes);
      const url = await getSignedUrl(
        deps.s3,
        new UploadPartCommand({
          Bucket: bucket,
          Key: key,
          UploadId: uploadId,
          PartNumber: partNumber,
          ContentLength: length,
        }),
        { expiresIn: urlTtlSeconds },
      );
      return { partNumber, size: length, url };
    }),
  );
  const downloadUrl = await getSignedUrl(deps.s3, new GetObjectCommand({ Bucket: bucket, Key: key }), {
    expiresIn: urlTtlSeconds,
  });
  return {
    fileId: record.id,
    fileName: record.fileName,
    contentType: body.contentType,
    size: record.size,
    status: 'uploaded' as const,
    partSize: partBytes,
    parts,
    uploadMethod: 'PUT' as const,
    downloadUrl,
    expiresIn: urlTtlSeconds,
    createdAt: now,
  };
}

/** What S3 says when the parts sent do not make the upload, said as the client's mistake. */
const PART_ERRORS = new Set(['InvalidPart', 'InvalidPartOrder', 'EntityTooSmall', 'NoSuchUpload']);

/**
 * Steps: the caller's file (not found otherwise) with its multipart upload still open (409
 * otherwise) → every part named once, in order → S3 completes the object (its refusal is 400 with
 * S3's code) → the record forgets the upload.
 */
export async function completeMultipartUpload(
  deps: UploadDeps,
  input: { userId: string; fileId: string; body: z.infer<typeof completeMultipartBody> },
) {
  const record = await ownedFile(deps, input);
  const uploadId = record.multipartUploadId;
  if (!uploadId) throw new ConflictError('This file has no multipart upload in progress', 'NOT_MULTIPART');
  const expected = Math.max(1, Math.ceil(record.size / deps.settings.partBytes));
  const { parts } = input.body;
  if (parts.length !== expected || parts.some((p, i) => p.partNumber !== i + 1)) {
    const message = `Send the ETag of each of the ${expected} parts, partNumber 1 to ${expected} in order`;
    throw new InvalidInputError(message, [{ path: 'body.parts', message, code: 'PARTS_MISMATCH' }]);
  }
  try {
    await deps.s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: deps.storage.bucket,
        Key: record.s3Key,
        UploadId: uploadId,
        MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag })) },
      }),
    );
  } catch (err) {
    const code = (err as { name?: string }).name ?? '';
    if (!PART_ERRORS.has(code)) throw err;
    const message = `The storage refused the parts (${code}): upload every part to its URL and send the ETags it answered`;
    throw new InvalidInputError(message, [{ path: 'body.parts', message, code }], code);
  }
  await deps.files.endMultipart(record.id, uploadId);
  return { fileId: record.id, status: 'uploaded' as const, size: record.size };
}
