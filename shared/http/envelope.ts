import type { FieldIssue } from './errors.ts';

// The two body shapes of the contract: the envelope (chat, message, auth, PDF and upload
// routes) and bare objects with `{ message }` errors (order and product routes). statusCode always equals
// the HTTP status. A third, `openai`, is OpenAI's own (the OpenAI-compatible routes): bare objects and
// `{ error: { message, type, param, code } }` errors, so OpenAI's clients read them unchanged.

export type BodyShape = 'envelope' | 'bare' | 'openai';

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

/** The envelope's message on success: the route's or the handler's, else the status's own. */
export const successMessage = (statusCode: number, message?: string): string =>
  message ?? defaultMessages[statusCode] ?? 'OK';

export function successBody(shape: BodyShape, statusCode: number, data: unknown, message?: string): unknown {
  if (shape !== 'envelope') return data;
  return { success: true, statusCode, message: successMessage(statusCode, message), data } satisfies Envelope;
}

/** OpenAI's error object: `type` by status as OpenAI names them, `code` the machine-readable reason. */
export interface OpenAiError {
  error: { message: string; type: string; param: string | null; code: string | null };
}

const OPENAI_TYPES: Record<number, string> = {
  401: 'invalid_request_error',
  403: 'permission_error',
  429: 'rate_limit_error',
  503: 'service_unavailable_error',
};
const OPENAI_CODES: Record<number, string> = {
  401: 'invalid_api_key',
  403: 'insufficient_permissions',
  404: 'not_found',
  429: 'rate_limit_exceeded',
};

/** Our codes that OpenAI has a name for (its clients branch on these). */
const OPENAI_NAME_OF: Record<string, string> = {
  RATE_LIMITED: 'rate_limit_exceeded',
  TOKEN_BUDGET_EXHAUSTED: 'insufficient_quota',
};

function openAiError(statusCode: number, message: string, errors?: FieldIssue[], ourCode?: string): OpenAiError {
  const code = ourCode && (OPENAI_NAME_OF[ourCode] ?? ourCode.toLowerCase());
  const type =
    code === 'insufficient_quota'
      ? code
      : (OPENAI_TYPES[statusCode] ?? (statusCode >= 500 ? 'server_error' : 'invalid_request_error'));
  // A field issue's path names the body's field as OpenAI's `param` does ("messages.0.content").
  const param = errors?.[0]?.path.replace(/^(?:body|query|params)\.?/, '') || null;
  return {
    error: {
      message: errors?.[0] && statusCode === 400 ? `${message}: ${errors[0].path} ${errors[0].message}` : message,
      type,
      param,
      code: code ?? OPENAI_CODES[statusCode] ?? null,
    },
  };
}

export function errorBody(
  shape: BodyShape,
  statusCode: number,
  message: string,
  errors?: FieldIssue[],
  code?: string,
): unknown {
  if (shape === 'openai') return openAiError(statusCode, message, errors, code);
  const withErrors = errors?.length ? { errors } : {};
  if (shape === 'bare') return { message, ...withErrors };
  return { success: false, statusCode, message, ...withErrors } satisfies Envelope;
}
