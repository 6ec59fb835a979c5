import { mcpRoutes } from '#shared/mcp/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { answerMcpRequest } from '#shared/http/mcp-transport.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { mcpDeps } from '#shared/mcp/mcp-deps.ts';
import { mcpServer } from '#shared/mcp/server.ts';
import { mcpRequestBody } from '#shared/mcp/schemas.ts';

// POST /mcp: the MCP server (Streamable HTTP, stateless): a JSON-RPC message or batch in, the
// answer out; the caller is the bearer token's user. The body is any JSON: the SDK checks it.

const deps = await mcpDeps(config(), systemClock);

export const handler = httpHandler(
  mcpRoutes.mcp,
  { body: mcpRequestBody },
  async ({ body, user, headers, event }) =>
    await answerMcpRequest(mcpServer(deps, user), {
      url: new URL(event.path, 'http://localhost').href,
      method: 'POST',
      headers,
      body,
    }),
);
