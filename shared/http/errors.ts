// Every error a client can be shown. Anything else is an internal error: logged, answered
// with a generic 500, its message never echoed.

export interface FieldIssue {
  path: string;
  message: string;
  code?: string;
}

export class HttpError extends Error {
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

export class UnauthorizedError extends HttpError {
  constructor(message = 'Authentication required') {
    super(401, message, { headers: { 'www-authenticate': 'Bearer' } });
  }
}

export class ForbiddenError extends HttpError {
  constructor(message = 'You do not have access to this resource') {
    super(403, message);
  }
}

export class NotFoundError extends HttpError {
  constructor(message = 'Not found') {
    super(404, message);
  }
}

export class MethodNotAllowedError extends HttpError {
  constructor(allowed: string[]) {
    super(405, 'Method not allowed', { headers: { allow: allowed.join(', ') } });
  }
}

export class ConflictError extends HttpError {
  constructor(message: string, code?: string) {
    super(409, message, { code });
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

/** A per-user limit (shared/limits/): try again after `retryAfterSeconds`. */
export class TooManyRequestsError extends HttpError {
  constructor(message: string, retryAfterSeconds: number, code?: string) {
    super(429, message, { headers: { 'retry-after': String(retryAfterSeconds) }, ...(code && { code }) });
  }
}

export class BadGatewayError extends HttpError {
  constructor(message = 'The upstream service failed') {
    super(502, message);
  }
}

export class ServiceUnavailableError extends HttpError {
  constructor(message = 'The service is temporarily unavailable', retryAfterSeconds?: number) {
    super(503, message, retryAfterSeconds ? { headers: { 'retry-after': String(retryAfterSeconds) } } : {});
  }
}

