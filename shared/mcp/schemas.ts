import * as z from '../zod.ts';
import { example } from '../openapi/examples.ts';

// POST /mcp: JSON-RPC 2.0 messages of the Model Context Protocol. The HTTP layer
// checks only that the body is a message or a batch of them; the SDK checks the rest.

const jsonRpcMessage = z.looseObject({
  jsonrpc: z.literal('2.0'),
  id: z.optional(z.union([z.string(), z.number(), z.null()])),
  method: z.optional(z.string()),
  params: z.optional(z.record(z.string(), z.unknown())),
});

export const mcpRequestBody = z
  .union([jsonRpcMessage, z.array(jsonRpcMessage).check(z.minLength(1), z.maxLength(100))])
  .check(
    example({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'search', arguments: { query: 'How are loops compiled?', k: 3 } },
    }),
  );
