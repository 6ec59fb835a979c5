import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { McpTransportError } from './errors.ts';

// An MCP exchange in a Lambda invocation (docs/DECISIONS.md "MCP server"): the SDK's web-standard
// Streamable HTTP transport, stateless (`sessionIdGenerator: undefined`: no session id is issued
// or asked for, so any instance answers any request) and answering in JSON rather than an event
// stream (`enableJsonResponse`: the answer is whole when the tools have run, which a buffered
// Lambda response can carry). The HTTP layer has read, size-checked and parsed the body and
// authenticated the caller before this runs; the transport checks the rest of the protocol
// (Accept, Content-Type, JSON-RPC shape, protocol version); its refusals (4xx) are answered in
// the route's error shape with the SDK's status and message (a client reads only the status).

export interface McpHttpAnswer {
  statusCode: number;
  headers: Record<string, string>;
  /** The JSON-RPC answer (absent for a notification's 202). */
  data?: unknown;
}

export async function answerMcpRequest(
  server: McpServer,
  request: { url: string; method: string; headers: Record<string, string | undefined>; body: unknown },
): Promise<McpHttpAnswer> {
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) if (value !== undefined) headers.set(name, value);
    const response = await transport.handleRequest(new Request(request.url, { method: request.method, headers }), {
      parsedBody: request.body,
    });
    const text = await response.text();
    if (response.status >= 400) throw new McpTransportError(response.status, refusalMessage(text));
    const kept: Record<string, string> = {};
    for (const name of ['content-type', 'allow', 'mcp-protocol-version']) {
      const value = response.headers.get(name);
      if (value) kept[name] = value;
    }
    return { statusCode: response.status, headers: kept, ...(text && { data: JSON.parse(text) as unknown }) };
  } finally {
    await server.close();
  }
}

/** The message of the transport's JSON-RPC error answer. */
function refusalMessage(text: string): string {
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === 'string' && message) return message;
  } catch {
    // not JSON: the generic message below
  }
  return 'The MCP request was refused';
}
