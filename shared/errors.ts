// The errors the domain throws: what went wrong, never how it is answered. shared/http/errors.ts
// maps them to HTTP responses in one table; the pipeline and the SSE stream render them their
// own way. Anything that is not one of these is an internal error.

/** A field-level problem, named by its path in the request (`body.items.0.productId`). */
export interface FieldIssue {
  path: string;
  message: string;
  code?: string;
}

interface DomainErrorDetails {
  /** A stable machine-readable code (`INVALID_STATUS_TRANSITION`). */
  code?: string;
  errors?: FieldIssue[];
}

export abstract class DomainError extends Error {
  constructor(
    message: string,
    readonly details: DomainErrorDetails = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The input is well formed but names something the domain refuses (an unknown product, a bad cursor). */
export class InvalidInputError extends DomainError {
  constructor(message: string, errors?: FieldIssue[], code?: string) {
    super(message, { errors, code });
  }
}

/** The caller could not be identified (no token, a bad one, a user that no longer exists). */
export class UnauthenticatedError extends DomainError {
  constructor(message = 'Authentication required') {
    super(message);
  }
}

/** The caller is known but may not do this. */
export class AccessDeniedError extends DomainError {
  constructor(message = 'You do not have access to this resource') {
    super(message);
  }
}

export class NotFoundError extends DomainError {
  constructor(message = 'Not found', code?: string) {
    super(message, { code });
  }
}

/**
 * `found` when it is `userId`'s. A missing one and anyone else's answer alike (`notFound()`), so
 * an id tells a stranger nothing of what it names.
 */
export function ownedBy<T extends { userId: string }>(found: T | undefined, userId: string, notFound: () => Error): T {
  if (!found || found.userId !== userId) throw notFound();
  return found;
}

/** The thing is not in a state that allows this (an order's status, a file still processing). */
export class ConflictError extends DomainError {
  constructor(message: string, code?: string) {
    super(message, { code });
  }
}

/** A move the order status machine does not list. */
export class InvalidTransitionError extends ConflictError {
  constructor(message: string) {
    super(message, 'INVALID_STATUS_TRANSITION');
  }
}

/** A per-user limit is spent (shared/limits/): try again after `retryAfterSeconds`. */
export class LimitExceededError extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    code?: string,
  ) {
    super(message, { code });
  }
}

/** A service we depend on cannot be reached or is busy; worth trying again after `retryAfterSeconds`. */
export class DependencyUnavailableError extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** A service we depend on refused what we asked of it (not the caller's doing): not worth retrying as is. */
export class DependencyFailedError extends DomainError {}

/** The work did not finish within its deadline. */
export class TimedOutError extends DomainError {}

/**
 * Anything thrown, as an Error: itself when it is one, else an Error carrying its text. A throw
 * may throw any value, so code that logs or reads an error takes it through here, not `as Error`.
 */
export function asError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(String(thrown));
}

/** The name of what was thrown (an AWS SDK error's type, e.g. `NoSuchKey`), or undefined for a non-Error. */
export const errorName = (thrown: unknown): string | undefined => (thrown instanceof Error ? thrown.name : undefined);
