import type { DocumentFormat } from '../readers/reader.ts';
import type { Failure } from './failures.ts';
import type { RunStage } from './stages.ts';

// A file's record (FileRepository stores it: file-item.ts is its item in the table), from its
// upload through each ingestion run to its delete.

export type FileStatus = FileRecord['status'];

/** What every file record holds, whatever its status. */
interface FileBase {
  id: string;
  userId: string;
  fileName: string;
  contentType: string;
  /** Size declared at upload, then the downloaded size. */
  size: number;
  /** Bytes charged to the owner's storage quota at upload (storage-quota.ts); absent before the quota. */
  quotaBytes?: number;
  /** Bytes counted in the owner's usage at upload (shared/limits/usage-ledger.ts); absent: not counted. */
  usageBytes?: number;
  /** The uploaded object (POST /upload). */
  s3Key: string;
  /** The S3 multipart upload still open for the object (POST /upload/multipart until its completion). */
  multipartUploadId?: string;
  /** Chats this file is attached to. */
  chatIds?: string[];
  /** Collections this file is in (shared/collections/). */
  collectionIds?: string[];
  createdAt: string;
  updatedAt: string;
}

/** An ingestion run (POST /message/pdf); stale messages carry another run id. */
export interface Run {
  runId: string;
  sourceUrl: string;
  /** The run was forced (force: true): it never reuses earlier embeddings. */
  forced: boolean;
  startedAt: string;
  /** Set while the run waits in its owner's ingestion queue (nothing of it is in the pipeline yet). */
  queuedAt?: string;
}

/** What a run records as it goes, each field written by the stage that learns it (kept when the run ends). */
export interface RunProgress {
  /** The document's format, read from its bytes (the fetch stage knows a PDF; the reader, the others). */
  format?: DocumentFormat;
  // pdf-fetch
  sha256?: string;
  fetchedAt?: string;
  // pdf-extract: pages read so far of the document's total, then what the text layers gave
  pagesDone?: number;
  pagesTotal?: number;
  pages?: number;
  /** Pages whose text layer was usable. */
  textPages?: number;
  /** Pages left without usable text: unusable text layer that OCR could not read, OCR off or over OCR_MAX_PAGES, or damaged. */
  unreadablePages?: number;
  /** Some page had a text layer that was not usable (decides UNREADABLE_TEXT over NO_TEXT_LAYER). */
  garbledPages?: number;
  /** Chunks and parts pdf-extract made from text layers (OCR chunks and parts are numbered after them). */
  extractChunks?: number;
  extractParts?: number;
  /** A document read in ranges of pages (PDF_EXTRACT_PAGES_PER_RANGE): their count, and those read (each once). */
  extractRangesTotal?: number;
  extractRangesDone?: number;
  doneExtractRanges?: Set<number>;
  /** The range length the ranges were planned with (page-ranges.ts), so that any reader can plan them again. */
  extractRangePages?: number;
  extractedAt?: string;
  // pdf-ocr: its ranges (messages) and how many are done, the pages to recognise and recognised
  // so far (live progress), then the pages it read
  ocrRangesTotal?: number;
  ocrRangesDone?: number;
  /** The ranges counted (each once). */
  doneOcrRanges?: Set<number>;
  ocrPagesTotal?: number;
  ocrPagesDone?: number;
  ocrPages?: number;
  // pdf-embed
  chunks?: number;
  partsTotal?: number;
  partsDone?: number;
  /** The parts counted (each once). */
  doneParts?: Set<number>;
  tokens?: number;
  model?: string;
  dimensions?: number;
  reusedFrom?: string;
  /** The earlier file of the same bytes and chunker whose chunks this run took instead of extracting (and recognising) again. */
  extractedFrom?: string;
  /** Chunker identity (version, encoding, sizes): embeddings are reusable only under the same one. */
  chunker?: string;
  /** The packed vectors of the last completed run (S3); a forced run replaces them when it completes. */
  vectorsKey?: string;
}

/** Uploaded (POST /upload), never ingested. */
export interface UploadedFile extends FileBase {
  status: 'uploaded';
}

export interface ProcessingFile extends FileBase, Run, RunProgress {
  status: 'processing';
  stage: RunStage;
}

export interface CompletedFile extends FileBase, Run, RunProgress {
  status: 'completed';
  stage: 'done';
  model: string;
  dimensions: number;
  chunker: string;
  vectorsKey: string;
  completedAt: string;
}

/** A run that failed (with its typed reason), or a file being deleted (its run retired). */
export interface FailedFile extends FileBase, Partial<Run>, RunProgress {
  status: 'failed';
  stage?: RunStage | 'done';
  failure?: Failure;
  failedAt?: string;
  completedAt?: string;
}

export type FileRecord = UploadedFile | ProcessingFile | CompletedFile | FailedFile;

/** What pdf-extract learned of the document, and where the run goes next. */
export type Extraction =
  | {
      next: 'embed';
      /** Set by the reader of a format other than PDF (the fetch stage records a PDF's). */
      format?: DocumentFormat;
      pages: number;
      textPages: number;
      unreadablePages: number;
      chunks: number;
      partsTotal: number;
      /** Chunks taken from an earlier file of the same bytes: its OCR pages and its id. */
      ocrPages?: number;
      extractedFrom?: string;
    }
  | {
      next: 'ocr';
      pages: number;
      textPages: number;
      unreadablePages: number;
      garbledPages: number;
      chunks: number;
      extractParts: number;
      ocrRangesTotal: number;
      ocrPagesTotal: number;
    };

/** What pdf-ocr added once its last range is done: the run goes on to embedding. */
export interface OcrOutcome {
  ocrPages: number;
  unreadablePages: number;
  chunks: number;
  partsTotal: number;
}

/** DELETE /upload ends the file's run by giving it a run id with this prefix (FileRepository `retire`). */
export const RETIRED_RUN_PREFIX = 'deleted-';
/** True when the file is gone or being deleted: no stage may leave anything of it behind. */
export const isDeletedFile = (record: FileRecord | undefined): boolean =>
  !record || (record.status === 'failed' && (record.runId?.startsWith(RETIRED_RUN_PREFIX) ?? false));
