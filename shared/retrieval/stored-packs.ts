import { ConflictError, errorName } from '../errors.ts';
import { logger } from '../observability/logger.ts';
import type { CompletedFile } from '../files/file-record.ts';
import { type FileStorage, isLexicalObject } from '../files/storage.ts';
import { postingsByTerm } from './lexical-index.ts';
import { DamagedPackError, decodePacked, type PackedVectors } from './packed-vectors.ts';

// A completed file's packed vectors as retrieval loads them: read from S3 and checked against the
// file's record, a missing or damaged object answered as a typed "ingest it again" (409).

/** The typed "ingest it again" answer for a file whose stored vectors cannot be used (missing or damaged). */
export const ingestAgain = (file: CompletedFile, what: string) =>
  new ConflictError(
    `The stored vectors of "${file.fileName}" (file ${file.id}) are ${what}; ingest it again: POST /message/pdf with this fileId and "force": true`,
    'FILE_DATA_MISSING',
  );

/**
 * A completed file's packed vectors. Gone (a lost local S3, an object deleted by hand), the file
 * cannot be searched until it is ingested again: ConflictError naming it, never an internal error.
 */
export async function readVectors(storage: FileStorage, file: CompletedFile): Promise<Uint8Array> {
  try {
    return await storage.get(file.vectorsKey);
  } catch (err) {
    if (errorName(err) !== 'NoSuchKey') throw err;
    logger.warn('packed vectors missing', { fileId: file.id, key: file.vectorsKey });
    throw ingestAgain(file, 'missing');
  }
}

/**
 * A file's packed vectors, decoded and checked against its record (its embedding size), with its
 * lexical index grouped by term for queries (once per load). Damaged bytes (cut short, overwritten,
 * another size) are the missing object's typed 409, found here, before any search and before the
 * cache keeps them.
 */
export function loadPack(bytes: Uint8Array, file: CompletedFile): PackedVectors {
  let packed: PackedVectors;
  try {
    packed = decodePacked(bytes);
  } catch (err) {
    if (!(err instanceof DamagedPackError)) throw err;
    logger.warn('packed vectors damaged', { fileId: file.id, key: file.vectorsKey, detail: err.message });
    throw ingestAgain(file, 'damaged');
  }
  const lexicalOnly = packed.dimensions === 0 && isLexicalObject(file.vectorsKey);
  if (!lexicalOnly && packed.dimensions !== file.dimensions && Number.isInteger(file.dimensions)) {
    logger.warn('packed vectors of another size', {
      fileId: file.id,
      key: file.vectorsKey,
      dimensions: packed.dimensions,
      recorded: file.dimensions,
    });
    throw ingestAgain(file, 'damaged');
  }
  if (packed.lexical) postingsByTerm(packed.lexical);
  return packed;
}
