import { InvalidInputError } from '../errors.ts';
import { clientFailure, type PermanentFailure, type RetryableFailure } from '../files/failures.ts';
import { uploadKey } from '../files/storage.ts';
import { logger } from '../observability/logger.ts';

// What a request that names a URL is told when the URL is refused or its size check fails.

/**
 * What the service's own bucket answered for the file's own upload URL (the downloadUrl of
 * POST /upload), said plainly: the bucket is ours, so saying it tells no one anything about a
 * host they could not reach themselves.
 */
const OWN_UPLOAD_ANSWERS: Record<number, { message: string; code: string }> = {
  404: {
    message:
      'Nothing has been uploaded for this file yet: PUT the document to the uploadUrl of POST /upload (with its uploadHeaders), then send this again',
    code: 'NOT_UPLOADED',
  },
  403: {
    message:
      'The storage refused this download URL: it has expired or was altered. Upload the document again (POST /upload)',
    code: 'URL_EXPIRED',
  },
};

/** Whether a URL points at a file's own upload in the bucket (path-style or virtual-hosted). */
export const isOwnUpload = (url: URL, userId: string, fileId: string) =>
  decodeURIComponent(url.pathname).endsWith(`/${uploadKey(userId, fileId)}`);

/**
 * A URL refused or a size check failed: InvalidInputError with the reason (URL_REFUSED, TOO_LARGE,
 * DOWNLOAD_FAILED). A failed size check says its cause class only (clientFailure), except for the
 * file's own upload URL, whose bucket's answer is said plainly (OWN_UPLOAD_ANSWERS).
 */
export function urlError(err: PermanentFailure | RetryableFailure, ownUpload = false): InvalidInputError {
  const own = ownUpload && err.httpStatus !== undefined ? OWN_UPLOAD_ANSWERS[err.httpStatus] : undefined;
  if (own)
    return new InvalidInputError(own.message, [{ path: 'body.url', message: own.message, code: own.code }], own.code);
  const { message } = clientFailure(err);
  if (message !== err.message) logger.info('size check failed', { reason: err.reason, detail: err.message });
  return new InvalidInputError(message, [{ path: 'body.url', message, code: err.reason }], err.reason);
}
