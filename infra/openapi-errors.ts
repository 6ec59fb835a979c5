import type { RouteContract } from '#shared/openapi/contract.ts';
import type { httpRouteList } from './routes.ts';

// The OpenAPI document's error bodies, their descriptions and each route's example of them (as the
// code writes its messages), and the streamed replies' description: what infra/openapi.ts states
// for every operation.

type Json = Record<string, unknown>;

/** Where the document's named schemas are. */
export const COMPONENTS = '#/components/schemas/';

/** Our two error bodies: `message` and the optional field `errors`, after the envelope's own fields (`head`). */
const errorObject = (description: string, example: string, head: Record<string, Json> = {}) => ({
  type: 'object',
  description,
  required: [...Object.keys(head), 'message'],
  properties: {
    ...head,
    message: { type: 'string', examples: [example] },
    errors: { $ref: `${COMPONENTS}FieldErrors` },
  },
});
export const envelopeError = errorObject(
  'The error body of chat, message, auth, upload and PDF routes',
  'Chat not found',
  {
    success: { const: false },
    statusCode: { type: 'integer', description: 'Always equals the HTTP status', examples: [404] },
  },
);
export const bareError = errorObject('The error body of order and product routes', 'Order not found');
export const openAiError = {
  type: 'object',
  description: "The error body of the OpenAI-compatible routes: OpenAI's own",
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['message', 'type', 'param', 'code'],
      properties: {
        message: { type: 'string' },
        type: { type: 'string', examples: ['invalid_request_error'] },
        param: { type: ['string', 'null'], examples: ['messages'] },
        code: { type: ['string', 'null'], examples: ['model_not_found'] },
      },
    },
  },
};
export const OPENAI_MODEL_NOT_FOUND =
  'The model `file:f5h8j2k6m3n9p4q7r1s0t8uv` does not exist or you do not have access to it. GET /openai/models lists yours.';
export const SSE_DESCRIPTION =
  'Server-Sent Events, each with `id: n` (1, 2, … within the reply; resume with Last-Event-ID at GET /chat/{chatId}/messages/{messageId}/stream): ' +
  'first `event: start` (StreamStartEvent: the stored prompt and the id of the reply, stored as it grows with status streaming); ' +
  'in a file chat `event: sources` next (an array of Source, before any delta that cites them); ' +
  'then one unnamed `data: {"content": "…"}` event per model delta (StreamDeltaEvent); `event: citations` `{ cited: [n, …] }` (file chats); ' +
  '`event: usage` (Usage); `event: stopped` `{}` after a stop; `event: error` with `{ "message" }` on a failure after the stream began; ' +
  '`: keep-alive` comments while the model is quiet; ' +
  'always last `data: [DONE]`.';
export const errorDescriptions: Record<number, string> = {
  400: 'Invalid input (field-level `errors`)',
  401: 'Missing, invalid or expired token',
  403: 'Not allowed',
  404: 'Not found (or not yours)',
  405: 'Method not allowed',
  409: 'Conflicts with the current state',
  413: 'Body too large',
  415: 'Body is not JSON',
  429: 'A per-user limit was reached (requests per minute, the daily token budget, or ingestions or replies in flight); see Retry-After',
  500: 'Internal error (the message never carries details)',
  502: 'An upstream service failed',
  503: 'A dependency is unavailable; retry later',
};

/** What the route answers with an error status (messages as the code writes them), shown as the response's example. */
export function errorExample(
  route: (typeof httpRouteList)[number],
  contract: RouteContract,
  status: number,
): { message: string; errors?: Json[] } {
  const { path } = route;
  const onFile = path.startsWith('/upload') || path.startsWith('/message/pdf');
  const examples: Record<number, { message: string; errors?: Json[] }> = {
    400: {
      message: 'Request validation failed',
      errors: [
        path.includes('{')
          ? { path: `params.${/\{(\w+)\}/.exec(path)![1]}`, message: 'Must be a CUID', code: 'invalid_format' }
          : { path: 'query.limit', message: 'Too big: expected number to be <=100', code: 'too_big' },
      ],
    },
    401: { message: route.auth === 'idp' ? 'Invalid or expired ID token' : 'Invalid or expired token' },
    403: {
      message:
        route.auth === 'admin'
          ? 'This operation requires the admin role: admins are the emails in the ADMIN_EMAILS setting, and take the role by signing in again at POST /auth'
          : 'You do not have access to this chat',
    },
    404: {
      message: onFile
        ? 'File not found'
        : path.startsWith('/orders')
          ? 'Order not found'
          : path.startsWith('/products')
            ? 'Product not found'
            : 'Chat not found',
    },
    409: {
      message: path.startsWith('/orders')
        ? 'Cannot move order from Delivered to Processing (Delivered is final)'
        : 'This chat\'s PDF is still being processed: "paper.pdf" (extracting text, page 3 of 12). Ask again once GET /message/pdf/{fileId} says completed.',
    },
    429: { message: 'Too many requests: at most 20 per minute here' },
    500: onFile
      ? {
          message: 'Processing failed in pdf-extract after 5 attempts',
          errors: [
            { path: 'fileId', message: 'Processing failed in pdf-extract after 5 attempts', code: 'PROCESSING_FAILED' },
          ],
        }
      : { message: 'Internal server error' },
    502: { message: 'The AI provider failed to answer' },
    503: { message: 'The identity provider could not be reached' },
    504: { message: 'The AI provider did not answer in time' },
  };
  const known = examples[status] ?? { message: 'Error' };
  // A route with a body: a body error (an extra key).
  if (status === 400 && contract.body)
    return { ...known, errors: [{ path: 'body', message: 'Unrecognized key: "extra"', code: 'unrecognized_keys' }] };
  return known;
}
