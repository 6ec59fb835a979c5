import * as z from '../zod.ts';
import type { NamedSchemas, RouteContracts } from '../openapi/contract.ts';
import { example } from '../openapi/examples.ts';
import { mcpRequestBody } from './schemas.ts';

// The OpenAPI contracts of the mcp routes (infra/openapi.ts alone imports this file, so no
// function bundle builds them): the schemas the document names, and what it says of each route.

const jsonRpcAnswer = z
  .looseObject({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.string(), z.number(), z.null()]),
    result: z.optional(z.record(z.string(), z.unknown())),
    error: z.optional(z.object({ code: z.number(), message: z.string(), data: z.optional(z.unknown()) })),
  })
  .check(
    example({
      jsonrpc: '2.0',
      id: 1,
      result: {
        content: [
          { type: 'text', text: '[1] paper.pdf, page 2: Trace trees cover a program by forming one tree per loop.' },
        ],
        structuredContent: { passages: [] },
      },
    }),
  );

export const schemas: NamedSchemas = { McpMessage: mcpRequestBody, McpAnswer: jsonRpcAnswer };

export const contracts: RouteContracts = {
  mcp: {
    summary: 'The MCP server (Streamable HTTP, stateless): JSON-RPC in, JSON out',
    description:
      "For an MCP client (the official SDK's StreamableHTTPClientTransport, or any agent speaking MCP) with the " +
      'bearer token as its Authorization header. Tools: search { query, collectionId?, fileIds?, k? }, ask { question, ' +
      'collectionId?, fileIds? }, list_collections { cursor? }, list_files { collectionId?, cursor? }, read_part ' +
      '{ fileId, part }; each answers text content and structuredContent (its outputSchema in tools/list). Another ' +
      "user's collection or file gives a result with isError: true. No session is kept: no Mcp-Session-Id is issued, " +
      'any instance answers. A notification alone is answered 202 without a body. The Accept header must name both ' +
      'application/json and text/event-stream (406 otherwise), the answer is always JSON. GET (an event stream) and ' +
      'DELETE (ending a session) on this path are 405 with Allow: POST, answered by the gateway.',
    body: mcpRequestBody,
    responses: { 200: jsonRpcAnswer, 202: null },
    errors: [400, 401, 406, 413, 415, 429],
  },
};
