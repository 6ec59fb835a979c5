import { DomainError } from '../errors.ts';
import type { PipelineStageName } from './stages.ts';

// Why an ingestion failed: a typed reason the client can act on, and a human message.
// Permanent failures (the document itself is the problem) fail the file at once and are never
// retried; anything else is retried by SQS and only fails the file on the last attempt.

export const failureReasons = [
  'TOO_LARGE',
  'NOT_PDF',
  'ENCRYPTED',
  'NO_TEXT_LAYER',
  // Text was found but none of it is usable, even after OCR: fonts without a Unicode map
  // (glyph ids instead of characters) on pages OCR could not read, or OCR is off.
  'UNREADABLE_TEXT',
  'TOO_MANY_PAGES',
  // The document would cost more than its budget to read (time, memory, content that inflates
  // without bound, oversized CMaps): a hostile or pathological PDF, refused rather than crashing.
  'TOO_COMPLEX',
  'DOWNLOAD_FAILED',
  // The URL (or a redirect) is not one the service may fetch: not http(s), credentials, or a
  // private, loopback, link-local or metadata address (SSRF guard).
  'URL_REFUSED',
  'EMBEDDING_FAILED',
  // An internal error that persisted through every retry (storage, queue); not the document's fault.
  'PROCESSING_FAILED',
] as const;

export type FailureReason = (typeof failureReasons)[number];

export interface Failure {
  reason: FailureReason;
  message: string;
  /** The pipeline stage that failed, when a dead-letter consumer recorded it (PROCESSING_FAILED). */
  stage?: PipelineStageName;
}

/**
 * What a client is told when a PDF's URL could not be fetched (size check or download), whatever
 * happened: a refused connection, a parse error, a 404 or a timeout would otherwise tell a caller
 * which hosts and ports answer what (a port scanner run by the service). The detail is logged.
 */
export const DOWNLOAD_FAILED_MESSAGE = 'The PDF could not be downloaded from the URL';

/** The message of a failure as a client may see it (the detail of a download failure stays in the logs). */
export const clientFailureMessage = (reason: FailureReason, message: string): string =>
  reason === 'DOWNLOAD_FAILED' ? DOWNLOAD_FAILED_MESSAGE : message;

/** What a failed request to a PDF's URL answered, when it answered with an HTTP status. */
export interface FailureOptions {
  cause?: unknown;
  httpStatus?: number;
}

/** A failure caused by the document or its URL: retrying cannot help. */
export class PermanentFailure extends Error {
  override name = 'PermanentFailure';
  readonly httpStatus?: number;
  constructor(
    readonly reason: FailureReason,
    message: string,
    options: FailureOptions = {},
  ) {
    super(message, { cause: options.cause });
    this.httpStatus = options.httpStatus;
  }
}

/** A failure worth retrying (network, 5xx, throttling); its reason is used on the last attempt. */
export class RetryableFailure extends Error {
  override name = 'RetryableFailure';
  readonly httpStatus?: number;
  constructor(
    readonly reason: FailureReason,
    message: string,
    options: FailureOptions = {},
  ) {
    super(message, { cause: options.cause });
    this.httpStatus = options.httpStatus;
  }
}

/** Whether the document or its URL is the problem (the caller's to fix), rather than the service. */
export function documentAtFault(reason: FailureReason): boolean {
  switch (reason) {
    case 'TOO_LARGE':
    case 'NOT_PDF':
    case 'ENCRYPTED':
    case 'NO_TEXT_LAYER':
    case 'UNREADABLE_TEXT':
    case 'TOO_MANY_PAGES':
    case 'TOO_COMPLEX':
    case 'URL_REFUSED':
      return true;
    default:
      return false; // download, embedding or processing failure
  }
}

/** An ingestion that a request waited for ended failed: its typed reason and message. */
export class IngestionFailedError extends DomainError {
  constructor(readonly failure: Failure) {
    super(failure.message, {
      code: failure.reason,
      errors: [{ path: 'fileId', message: failure.message, code: failure.reason }],
    });
  }

  get documentAtFault(): boolean {
    return documentAtFault(this.failure.reason);
  }
}
