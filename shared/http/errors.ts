import { AiProviderError, clientMessage } from '../ai/errors.ts';
import {
  AccessDeniedError,
  ConflictError,
  DependencyFailedError,
  DependencyUnavailableError,
  DomainError,
  InvalidInputError,
  LimitExceededError,
  NotFoundError,
  TimedOutError,
  UnauthenticatedError,
  type FieldIssue,
} from '../errors.ts';
import { IngestionFailedError } from '../files/failures.ts';

// Every error a client can be shown: the HTTP layer's own (a body it cannot read) and the one
// table that turns the domain's errors (shared/errors.ts) into statuses. Anything else is an
// internal error: logged, answered with a generic 500, its message never echoed.

export type { FieldIssue };

class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly details: { errors?: FieldIssue[]; headers?: Record<string, string>; code?: string } = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequestError extends HttpError {
  constructor(message: string, errors?: FieldIssue[], code?: string) {
    super(400, message, { errors, code });
  }
}

export class ValidationError extends BadRequestError {
  constructor(errors: FieldIssue[], message = 'Request validation failed') {
    super(message, errors, 'VALIDATION_FAILED');
  }
}

export class PayloadTooLargeError extends HttpError {
  constructor(limitBytes: number) {
    super(413, `Request body exceeds ${limitBytes} bytes`);
  }
}

export class UnsupportedMediaTypeError extends HttpError {
  constructor(message = 'Content-Type must be application/json') {
    super(415, message);
  }
}

/**
 * A refusal of the MCP transport (shared/http/mcp-transport.ts: a JSON-RPC body it cannot take,
 * an Accept header without both media types …), with the SDK's status and message.
 */
export class McpTransportError extends HttpError {
  constructor(statusCode: number, message: string) {
    super(statusCode, message, { code: 'MCP_TRANSPORT' });
  }
}

/** The one mapping of domain errors to statuses; a new domain error gets its row here. */
const STATUS_OF: [new (...args: never[]) => DomainError, number][] = [
  [InvalidInputError, 400],
  [UnauthenticatedError, 401],
  [AccessDeniedError, 403],
  [NotFoundError, 404],
  [ConflictError, 409],
  [LimitExceededError, 429],
  [DependencyFailedError, 502],
  [DependencyUnavailableError, 503],
  [TimedOutError, 504],
];

const retryAfter = (seconds: number | undefined): Record<string, string> =>
  seconds ? { 'retry-after': String(seconds) } : {};

/** The response for an error a client may be shown; undefined for an internal error (a 500). */
export function httpErrorOf(err: unknown): HttpError | undefined {
  if (err instanceof HttpError) return err;
  if (err instanceof AiProviderError) {
    const status = err.kind === 'timeout' ? 504 : err.kind === 'rate-limited' ? 503 : 502;
    return new HttpError(status, clientMessage(err), {
      headers: status === 503 ? retryAfter(err.details.retryAfterSeconds ?? 5) : {},
    });
  }
  if (err instanceof IngestionFailedError) {
    // The spec lists 400 (the document or its URL is the problem) and 500 (ours) for a failed ingestion.
    return new HttpError(err.documentAtFault ? 400 : 500, err.message, err.details);
  }
  if (!(err instanceof DomainError)) return undefined;
  const status = STATUS_OF.find(([type]) => err instanceof type)?.[1];
  if (status === undefined) return undefined;
  const headers =
    err instanceof UnauthenticatedError
      ? { 'www-authenticate': 'Bearer' }
      : err instanceof LimitExceededError || err instanceof DependencyUnavailableError
        ? retryAfter(err.retryAfterSeconds)
        : {};
  return new HttpError(status, err.message, { ...err.details, headers });
}
