import { STATUS_CODES } from 'node:http';
import { DomainError } from '../errors.ts';
import type { PipelineStageName } from './stages.ts';

// Why an ingestion failed: a typed reason the client can act on, and a human message.
// Permanent failures (the document itself is the problem) fail the file at once and are never
// retried; anything else is retried by SQS and only fails the file on the last attempt.

export const failureReasons = [
  'TOO_LARGE',
  // A damaged PDF (or no page of it could be read).
  'NOT_PDF',
  // The bytes are no format read here, a legacy binary Office file or an encrypted package: the
  // message says what they are and what to do (docs/DECISIONS.md "Documents, not only PDFs").
  'UNSUPPORTED_TYPE',
  // A package or markup that is damaged: not what it claims to be.
  'INVALID_DOCUMENT',
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

/**
 * Why a download failed, as a class a client may be told. Everything that happens before an HTTP
 * answer (refused, unreachable, timed out, not an HTTP server, TLS) is one class: telling those
 * apart is what a port scanner needs. Once a server has answered over HTTP, what it answered is
 * no secret (a page that is not a PDF already says NOT_PDF).
 */
export const downloadCauses = ['NO_HTTP_ANSWER', 'HTTP_STATUS', 'TOO_SLOW', 'INTERRUPTED', 'REDIRECTS'] as const;
export type DownloadCause = (typeof downloadCauses)[number];

export interface Failure {
  reason: FailureReason;
  message: string;
  /** The pipeline stage that failed, when a dead-letter consumer recorded it (PROCESSING_FAILED). */
  stage?: PipelineStageName;
  /** DOWNLOAD_FAILED: the class of cause, and the status the server answered (HTTP_STATUS). */
  cause?: DownloadCause;
  httpStatus?: number;
}

/** The start of every DOWNLOAD_FAILED message; the cause class follows it. The detail is logged. */
export const DOWNLOAD_FAILED_MESSAGE = 'The PDF could not be downloaded from the URL';

const CAUSE_TEXT: Record<DownloadCause, (status?: number) => string> = {
  NO_HTTP_ANSWER: () =>
    'no HTTP answer came back (the host is unreachable, refused or did not answer in time, or is not an HTTP server; which of these is not said)',
  HTTP_STATUS: (status) => `the server answered ${status} ${STATUS_CODES[status ?? 0] ?? ''}`.trimEnd(),
  TOO_SLOW: () => 'the server sent it too slowly',
  INTERRUPTED: () => 'the server cut the download short',
  REDIRECTS: () => 'its redirects could not be followed (a redirect without a Location, or too many)',
};

/** A failure as a client may see it: a download failure says its cause class, never its detail. */
export function clientFailure(err: PermanentFailure | RetryableFailure): Failure {
  if (err.reason !== 'DOWNLOAD_FAILED') return { reason: err.reason, message: err.message };
  const cause = err.downloadCause;
  if (!cause) return { reason: err.reason, message: DOWNLOAD_FAILED_MESSAGE };
  return {
    reason: err.reason,
    message: `${DOWNLOAD_FAILED_MESSAGE}: ${CAUSE_TEXT[cause](err.httpStatus)}`,
    cause,
    ...(cause === 'HTTP_STATUS' && err.httpStatus !== undefined && { httpStatus: err.httpStatus }),
  };
}

/** What a failed request to a PDF's URL answered, and the class of a download failure. */
interface FailureOptions {
  cause?: unknown;
  httpStatus?: number;
  downloadCause?: DownloadCause;
}

/** A typed failure of a pipeline stage: its reason, and what its URL answered when there was one. */
abstract class PipelineFailure extends Error {
  readonly httpStatus?: number;
  readonly downloadCause?: DownloadCause;
  constructor(
    readonly reason: FailureReason,
    message: string,
    options: FailureOptions = {},
  ) {
    super(message, { cause: options.cause });
    this.httpStatus = options.httpStatus;
    this.downloadCause = options.downloadCause;
  }
}

/** A failure caused by the document or its URL: retrying cannot help. */
export class PermanentFailure extends PipelineFailure {
  override name = 'PermanentFailure';
}

/** A failure worth retrying (network, 5xx, throttling); its reason is used on the last attempt. */
export class RetryableFailure extends PipelineFailure {
  override name = 'RetryableFailure';
}

/**
 * Whether the document or its URL is the problem (the caller's to fix), rather than the service.
 * A download failure with a cause is the URL's server's doing, whatever it was: what it answered
 * (a 404 or a 503 alike), a body it cut short or sent too slowly, redirects, or no answer at all
 * (the size check already says so with a 400). Only a failure without a cause is ours.
 */
export function documentAtFault({ reason, cause }: Pick<Failure, 'reason' | 'cause'>): boolean {
  if (reason === 'DOWNLOAD_FAILED') return cause !== undefined;
  switch (reason) {
    case 'TOO_LARGE':
    case 'NOT_PDF':
    case 'UNSUPPORTED_TYPE':
    case 'INVALID_DOCUMENT':
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
    return documentAtFault(this.failure);
  }
}
