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
}

/** A failure caused by the document or its URL: retrying cannot help. */
export class PermanentFailure extends Error {
  override name = 'PermanentFailure';
  constructor(
    readonly reason: FailureReason,
    message: string,
  ) {
    super(message);
  }
}

/** A failure worth retrying (network, 5xx, throttling); its reason is used on the last attempt. */
export class RetryableFailure extends Error {
  override name = 'RetryableFailure';
  constructor(
    readonly reason: FailureReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The HTTP status of POST /message/pdf when the ingestion it waited for failed. */
export function httpStatusOf(reason: FailureReason): 400 | 500 {
  switch (reason) {
    case 'TOO_LARGE':
    case 'NOT_PDF':
    case 'ENCRYPTED':
    case 'NO_TEXT_LAYER':
    case 'UNREADABLE_TEXT':
    case 'TOO_MANY_PAGES':
    case 'URL_REFUSED':
      return 400; // the document or its URL is the problem (the spec lists 400 and 500 only)
    default:
      return 500; // download, embedding or processing failure (spec: 500)
  }
}
