// What this domain's routes are, by function name: the fields of the HTTP layer's route
// (HttpRouteSettings, which infra/routes.ts checks each against; no import of shared/http here, which
// builds on the domains). What their functions get is the deployment's (infra/deployment/).

export const mcpRoutes = {
  // Streamable HTTP, stateless (a server per request, nothing kept: any instance answers). JSON-RPC
  // bodies, hence `bare`. GET and DELETE are the gateway's 405 (infra/gateway-responses.ts, docs/DECISIONS.md).
  mcp: {
    method: 'POST',
    path: '/mcp',
    auth: 'user',
    // An API key needs `read` to reach the tools; `search` and `ask` check theirs (server.ts).
    keyScope: 'read',
    shape: 'bare',
  },
} as const;
