import { httpRoutes } from '#infra/routes.ts';
import { httpHandler } from '#shared/http/handler.ts';

// GET /mcp: the Streamable HTTP transport's server-to-client event stream, which a stateless
// server does not offer. The transport's specification has the server answer 405 then, and
// clients go on with POST alone; the body is a JSON-RPC error, as the SDK's own answers are.

export const handler = httpHandler(httpRoutes['mcp-stream'], {}, async () => ({
  statusCode: 405,
  headers: { allow: 'POST' },
  data: {
    jsonrpc: '2.0',
    error: { code: -32000, message: 'Method not allowed: this server keeps no stream' },
    id: null,
  },
}));
