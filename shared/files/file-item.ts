import type { Item } from '../dynamo.ts';
import { createdKeys } from '../created-index.ts';
import { userListKeys } from '../user-index.ts';
import type { CompletedFile, FailedFile, FileRecord, ProcessingFile, UploadedFile } from './file-record.ts';

// File records (docs/ARCHITECTURE.md, Access patterns): FILE#<id> / META, listed in the owner's
// GSI1 partition (shared/user-index.ts). GSI2 is sparse and holds one of two things at a time:
//   PDF_INGESTING / <startedAt>#<id>                 while processing (restart recovery finds them)
//   FILEHASH#<userId>#<sha256> / <model>#<chunker>#… once completed (same bytes → reuse)
// This is the record's item: its keys and the fields read back (file-record.ts is the record).

export const INGESTING = 'PDF_INGESTING';
export const fileKey = (id: string) => ({ PK: `FILE#${id}`, SK: 'META' });
export const hashPk = (userId: string, sha256: string) => `FILEHASH#${userId}#${sha256}`;
export const hashSkPrefix = (model: string, chunker: string) => `${model}#${chunker}#`;

/** What pdf-extract counts of a document read in ranges (a record keeps them; a new run starts without). */
const EXTRACT_COUNTS = [
  'extractChunks',
  'extractParts',
  'extractRangesTotal',
  'extractRangesDone',
  'doneExtractRanges',
  'extractRangePages',
] as const;

/** Every field a record keeps (the item's other attributes are keys and the pipeline's counting sets). */
const FIELDS = [
  'id',
  'userId',
  'fileName',
  'contentType',
  'size',
  'quotaBytes',
  'usageBytes',
  's3Key',
  'multipartUploadId',
  'chatIds',
  'collectionIds',
  'createdAt',
  'updatedAt',
  'status',
  'stage',
  'runId',
  'sourceUrl',
  'forced',
  'startedAt',
  'queuedAt',
  'format',
  'sha256',
  'fetchedAt',
  'pagesDone',
  'pagesTotal',
  'pages',
  'textPages',
  'unreadablePages',
  'garbledPages',
  ...EXTRACT_COUNTS,
  'extractedAt',
  'ocrRangesTotal',
  'ocrRangesDone',
  'doneOcrRanges',
  'ocrPagesTotal',
  'ocrPagesDone',
  'ocrPages',
  'chunks',
  'partsTotal',
  'partsDone',
  'doneParts',
  'tokens',
  'model',
  'dimensions',
  'reusedFrom',
  'extractedFrom',
  'chunker',
  'vectorsKey',
  'completedAt',
  'failure',
  'failedAt',
] as const satisfies readonly (keyof UploadedFile | keyof ProcessingFile | keyof CompletedFile | keyof FailedFile)[];

/** Progress fields a new run starts without (the previous run's vectors stay until it completes). */
export const RUN_PROGRESS_RESET = [
  'failure',
  'failedAt',
  'partsTotal',
  'pages',
  'chunks',
  'fetchedAt',
  'extractedAt',
  'completedAt',
  'doneParts',
  'reusedFrom',
  'extractedFrom',
  'textPages',
  'ocrPages',
  'unreadablePages',
  'ocrRangesTotal',
  'ocrRangesDone',
  'ocrPagesTotal',
  'ocrPagesDone',
  'doneOcrRanges',
  ...EXTRACT_COUNTS,
  'garbledPages',
  'pagesDone',
  'pagesTotal',
] as const;

export const toItem = (r: UploadedFile): Item => ({
  ...fileKey(r.id),
  ...userListKeys('FILE', r),
  ...createdKeys('FILE', r),
  ...r,
});

export function fromItem(item: Item): FileRecord {
  const out: Item = {};
  for (const k of FIELDS) if (item[k] !== undefined) out[k] = item[k];
  if (item.chatIds instanceof Set) out.chatIds = [...item.chatIds].sort();
  if (item.collectionIds instanceof Set) out.collectionIds = [...item.collectionIds].sort();
  return out as unknown as FileRecord;
}
