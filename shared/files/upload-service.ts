import { AbortMultipartUploadCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createId } from '../ids.ts';
import type { z } from 'zod/mini';
import { isoNow, type Clock } from '../clock.ts';
import { asError, InvalidInputError, ownedBy } from '../errors.ts';
import { logger } from '../observability/logger.ts';
import type { AttachmentRepository } from './attachment-repository.ts';
import type { ChunkRepository } from './chunk-repository.ts';
import type { FileRepository } from './file-repository.ts';
import type { FileRecord } from './file-record.ts';
import type { createUploadBody } from './schemas.ts';
import { fileNotFound } from './file-status.ts';
import type { StorageQuota } from './storage-quota.ts';
import type { UsageLedger } from '../limits/usage-ledger.ts';
import { uploadKey, vectorsPrefix, workPrefix, type FileStorage } from './storage.ts';

// POST /upload and DELETE /upload/{fileId}.

/** Headers the presigned PUT signs besides host and content-length. */
const SIGNED_UPLOAD_HEADERS = new Set(['content-type']);

/** What deleting a file asks of the vector store (shared/retrieval/vector-store.ts). */
export interface FileVectors {
  removeFile(userId: string, fileId: string): Promise<void>;
}

export interface UploadDeps {
  files: FileRepository;
  chunks: ChunkRepository;
  attachments: AttachmentRepository;
  storage: FileStorage;
  /** Where the file's vectors are (S3 Vectors keeps them outside the file's objects). */
  vectors: FileVectors;
  quota: StorageQuota;
  /** The owner's usage counters (files). */
  usage: Pick<UsageLedger, 'addTotals'>;
  /** The presigning client (s3Client(): no checksum parameters in the URLs). */
  s3: S3Client;
  /** partBytes: the part size of a multipart upload (UPLOAD_PART_BYTES). */
  settings: { maxBytes: number; urlTtlSeconds: number; partBytes: number };
  clock: Clock;
  /**
   * The collections a deleted file leaves (shared/collections/ implements it; the files know no
   * collection). Absent: routes that delete no file.
   */
  collections?: FileCollections;
  /**
   * Hands the user's freed ingestion slot (a deleted file's run) to their waiting runs
   * (docs/DECISIONS.md "Fair bulk ingestion"); absent: nothing is released here.
   */
  releaseWaiting?: (userId: string) => Promise<unknown>;
}

/** What a file delete needs of the collections: taking the file out of one. */
export interface FileCollections {
  removeMember(collectionId: string, fileId: string): Promise<boolean>;
}

/**
 * Steps: a new upload record (`newUploadRecord`) → presign a PUT (content type and length
 * signed, so the upload cannot exceed what was declared) and a GET (the URL to give POST
 * /message/pdf).
 */
export async function createUpload(
  deps: UploadDeps,
  { userId, upload: body }: { userId: string; upload: z.infer<typeof createUploadBody> },
) {
  const { urlTtlSeconds } = deps.settings;
  const { record, key, now } = await newUploadRecord(deps, userId, body);
  const id = record.id;
  const bucket = deps.storage.bucket;
  const [uploadUrl, downloadUrl] = await Promise.all([
    getSignedUrl(
      deps.s3,
      new PutObjectCommand({ Bucket: bucket, Key: key, ContentType: body.contentType, ContentLength: body.size }),
      {
        expiresIn: urlTtlSeconds,
        // The presigner signs only host and content-length unless told: without this, any
        // Content-Type could be uploaded under the key (and served back with it).
        signableHeaders: SIGNED_UPLOAD_HEADERS,
      },
    ),
    getSignedUrl(deps.s3, new GetObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: urlTtlSeconds }),
  ]);
  return {
    fileId: id,
    fileName: record.fileName,
    contentType: body.contentType,
    size: record.size,
    status: 'uploaded' as const,
    uploadUrl,
    uploadMethod: 'PUT' as const,
    uploadHeaders: { 'content-type': body.contentType },
    downloadUrl,
    expiresIn: urlTtlSeconds,
    createdAt: now,
  };
}

/**
 * Refuses a size above the limit → charges it to the user's storage quota (storage-quota.ts) →
 * a new id and key → stores the record (status uploaded, the charge on it; `multipartUploadId`
 * when the object is written in parts) → counts it in the user's usage.
 */
export async function newUploadRecord(
  deps: UploadDeps,
  userId: string,
  body: z.infer<typeof createUploadBody>,
  beforeStore?: (key: string) => Promise<Pick<FileRecord, 'multipartUploadId'>>,
) {
  const { maxBytes } = deps.settings;
  if (body.size > maxBytes) {
    throw new InvalidInputError(`The file is larger than the ${maxBytes}-byte limit`, [
      { path: 'body.size', message: `Must be at most ${maxBytes}`, code: 'TOO_LARGE' },
    ]);
  }
  const quotaBytes = await deps.quota.charge(userId, body.size);
  const now = isoNow(deps.clock);
  const id = createId();
  const key = uploadKey(userId, id);
  let record: FileRecord;
  try {
    const multipart = beforeStore ? await beforeStore(key) : {};
    record = {
      id,
      userId,
      fileName: body.fileName,
      contentType: body.contentType,
      size: body.size,
      quotaBytes,
      usageBytes: body.size,
      s3Key: key,
      status: 'uploaded',
      createdAt: now,
      updatedAt: now,
      ...multipart,
    };
    await deps.files.create(record);
  } catch (err) {
    await deps.quota.refund(userId, quotaBytes);
    throw err;
  }
  await deps.usage.addTotals(userId, { files: 1, bytes: body.size });
  return { record, key, now };
}

/**
 * Steps: the caller's record (not found for anyone else) → retire its run (pipeline messages in
 * flight become no-ops) → detach it from its chats and take it out of its collections → delete
 * its chunks → delete its objects (upload, work files, packed vectors) → give its bytes back to
 * the quota, or hold them in a pending purge while its upload URL can still put the object back
 * (storage-quota.ts) → delete the record last, so a failed delete can be retried.
 */
export async function deleteUpload(
  deps: UploadDeps,
  { userId, fileId }: { userId: string; fileId: string },
): Promise<void> {
  const record = ownedBy(await deps.files.get(fileId), userId, fileNotFound);
  await deps.files.retire(fileId, isoNow(deps.clock));
  if (record.multipartUploadId) await abortMultipart(deps, record.s3Key, record.multipartUploadId);
  await Promise.all((record.chatIds ?? []).map((chatId) => deps.attachments.detach(chatId, fileId)));
  if ((record.collectionIds ?? []).length && !deps.collections)
    throw new Error('deleteUpload needs the collections to take the file out of');
  await Promise.all(
    (record.collectionIds ?? []).map((collectionId) => deps.collections?.removeMember(collectionId, fileId)),
  );
  await deps.chunks.deleteFrom(fileId, 0);
  // Before the objects: the file's lexical objects list the keys of its vectors.
  await deps.vectors.removeFile(userId, fileId);
  await Promise.all([
    deps.storage.deleteKeys([record.s3Key]),
    deps.storage.deletePrefix(workPrefix(fileId)),
    deps.storage.deletePrefix(vectorsPrefix(fileId)),
  ]);
  const urlExpiresAt = new Date(Date.parse(record.createdAt) + deps.settings.urlTtlSeconds * 1000);
  await deps.quota.release(record, urlExpiresAt);
  // Only the attempt that removed the record uncounts the file (a retried delete does not), and
  // only what its upload counted (the size changes once downloaded; older files were not counted).
  const removed = await deps.files.delete(fileId);
  if (removed && record.usageBytes !== undefined) {
    await deps.usage.addTotals(userId, { files: -1, bytes: -record.usageBytes });
  }
  if (record.status === 'processing') {
    // Best effort: the data sweep releases what this misses.
    await deps
      .releaseWaiting?.(userId)
      .catch((err) => logger.warn('could not release waiting ingestions', { userId, error: asError(err) }));
  }
}

/** Aborts an open multipart upload (its parts are dropped); one S3 already forgot is no error. */
export async function abortMultipart(deps: Pick<UploadDeps, 's3' | 'storage'>, key: string, uploadId: string) {
  try {
    await deps.s3.send(new AbortMultipartUploadCommand({ Bucket: deps.storage.bucket, Key: key, UploadId: uploadId }));
  } catch (err) {
    if ((err as { name?: string }).name !== 'NoSuchUpload') throw err;
  }
}
