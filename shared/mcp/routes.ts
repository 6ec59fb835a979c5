import type { RouteDefinitions } from '../http/route.ts';

// What the routes of this domain are (the HTTP layer reads them); what their deployment gets is
// infra's (infra/deployment/, by function name).

export const mcpRoutes = {
  // Streamable HTTP, stateless (a server per request, nothing kept: any instance answers). JSON-RPC
  // bodies, hence `bare`. There is no GET (a stateless server offers no event stream: docs/DECISIONS.md).
  mcp: {
    method: 'POST',
    path: '/mcp',
    auth: 'user',
    shape: 'bare',
  },
} as const satisfies RouteDefinitions;
