import type { FieldIssue } from './errors.ts';

// The two body shapes of the contract: the envelope (chat, message, auth, PDF and upload
// routes) and bare objects with `{ message }` errors (order and product routes). statusCode always equals
// the HTTP status.

export type BodyShape = 'envelope' | 'bare';

export interface Envelope<T = unknown> {
  success: boolean;
  statusCode: number;
  message: string;
  data?: T;
  errors?: FieldIssue[];
}

const defaultMessages: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
};

export function successBody(shape: BodyShape, statusCode: number, data: unknown, message?: string): unknown {
  if (shape === 'bare') return data;
  return {
    success: true,
    statusCode,
    message: message ?? defaultMessages[statusCode] ?? 'OK',
    data,
  } satisfies Envelope;
}

export function errorBody(shape: BodyShape, statusCode: number, message: string, errors?: FieldIssue[]): unknown {
  const withErrors = errors?.length ? { errors } : {};
  if (shape === 'bare') return { message, ...withErrors };
  return { success: false, statusCode, message, ...withErrors } satisfies Envelope;
}
