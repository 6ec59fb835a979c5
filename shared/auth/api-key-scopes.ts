// What an API key may do (docs/DECISIONS.md "API keys"): each route that accepts keys names the
// one scope it needs (its definition's `keyScope`, shared/<domain>/routes.ts); a route that names none refuses keys.
//   chat    prompts and replies (chats, messages, the OpenAI-compatible completions, MCP's `ask`)
//   search  passages across files (POST /search, MCP's `search`)
//   files   uploads, ingestion, collections
//   read    every read (GET) of the above and of the account; the MCP server and its list and read tools

export const API_KEY_SCOPES = ['chat', 'search', 'files', 'read'] as const;

export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];
