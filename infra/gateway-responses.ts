// What API Gateway answers on its own, with no function involved, as the stack configures it
// (infra/stacks/api-stack.ts) and the local gateway reproduces it (infra/local/gateway.ts):
// one table, so the two cannot drift apart. Gateway responses apply to the whole API (they have
// no per-route body shape, and their templates are plain substitutions, not VTL), so every one
// answers in the envelope shape; bare-shape clients still find their `message`.

export interface GatewayResponse {
  /** Logical id in the stack. */
  id: string;
  /** apigateway.ResponseType name. */
  type:
    | 'MISSING_AUTHENTICATION_TOKEN'
    | 'THROTTLED'
    | 'REQUEST_TOO_LARGE'
    | 'INTEGRATION_TIMEOUT'
    | 'DEFAULT_4XX'
    | 'DEFAULT_5XX';
  /** Overrides API Gateway's status; unset keeps the one of the error (e.g. 502 for a failed function). */
  statusCode?: number;
  /** A fixed message; unset keeps API Gateway's own ($context.error.messageString). */
  message?: string;
}

export const gatewayResponses = [
  // No method uses IAM auth, so "missing authentication token" only means "no such route": an
  // unknown path, or a known path with a method it does not have.
  { id: 'NoRoute', type: 'MISSING_AUTHENTICATION_TOKEN', statusCode: 404, message: 'Not found' },
  { id: 'Throttled', type: 'THROTTLED', statusCode: 429, message: 'Too many requests' },
  {
    id: 'TooLarge',
    type: 'REQUEST_TOO_LARGE',
    statusCode: 413,
    message: 'Request payload exceeds the 10 MB API Gateway limit',
  },
  { id: 'Timeout', type: 'INTEGRATION_TIMEOUT', statusCode: 504, message: 'Endpoint request timed out' },
  { id: 'Default4xx', type: 'DEFAULT_4XX' },
  // A function that throws, crashes, runs out of memory or times out: 502 "Internal server error".
  { id: 'Default5xx', type: 'DEFAULT_5XX' },
] as const satisfies readonly GatewayResponse[];

export type GatewayResponseType = (typeof gatewayResponses)[number]['type'];

/** The response's application/json body template, as deployed. */
export function gatewayResponseTemplate(r: GatewayResponse): string {
  const status = r.statusCode ? `"statusCode":${r.statusCode},` : '';
  return `{"success":false,${status}"message":${r.message ? JSON.stringify(r.message) : '$context.error.messageString'}}`;
}

/** What API Gateway sends for a response type, given the status and message it would use without an override. */
export function renderGatewayResponse(
  type: GatewayResponseType,
  status: number,
  ownMessage: string,
): { statusCode: number; body: string } {
  const r: GatewayResponse = gatewayResponses.find((g) => g.type === type)!;
  return {
    statusCode: r.statusCode ?? status,
    // $context.error.messageString is the message as a quoted JSON string.
    body: gatewayResponseTemplate(r).replace('$context.error.messageString', JSON.stringify(ownMessage)),
  };
}

/**
 * Methods API Gateway answers itself on a route's path (a mock integration in the stack, the same
 * answer from the local gateway): Streamable HTTP asks a server that offers no event stream (GET)
 * and no sessions (DELETE) to answer 405, and a MCP client then goes on with POST alone.
 */
export interface GatewayMethod {
  method: 'GET' | 'DELETE';
  /** A manifest route's path (under the stage's /v1). */
  path: string;
  statusCode: 405;
  /** The Allow header: the path's own methods. */
  allow: string;
  /** The body's message, in the route's error shape (`{ message }`, the MCP route's). */
  message: string;
}

const mcpStateless =
  'The MCP endpoint is stateless Streamable HTTP: POST each JSON-RPC message; it offers no event stream (GET) and no session to end (DELETE)';

export const gatewayMethods: readonly GatewayMethod[] = [
  { method: 'GET', path: '/mcp', statusCode: 405, allow: 'POST', message: mcpStateless },
  { method: 'DELETE', path: '/mcp', statusCode: 405, allow: 'POST', message: mcpStateless },
];

/** A gateway method's body as API Gateway sends it. */
export const gatewayMethodBody = (m: GatewayMethod) => JSON.stringify({ message: m.message });

/** The CORS preflight every resource answers (OPTIONS, a mock integration in the stack). */
export const corsPreflight = {
  allowMethods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
  allowHeaders: ['authorization', 'content-type', 'x-request-id', 'last-event-id'],
  exposeHeaders: ['x-request-id', 'x-next-cursor', 'content-disposition'],
  maxAgeSeconds: 600,
};
