import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from '../zod.ts';
import { cuidSchema } from '../schemas.ts';
import { encodeCursor } from '../dynamo.ts';
import { asError, DomainError } from '../errors.ts';
import { logger } from '../observability/logger.ts';
import type { CollectionRepository } from '../collections/collection-repository.ts';
import { listCollectionFiles, listCollections } from '../collections/collection-service.ts';
import type { FileRepository } from '../files/file-repository.ts';
import { partLocationSchema } from '../files/schemas.ts';
import { listFiles } from '../files/file-status.ts';
import type { UserLimits } from '../limits/user-limits.ts';
import type { PartText } from '../ingestion/page-service.ts';
import { searchFiles } from '../retrieval/search.ts';
import { searchFilesBody, SEARCH_K_MAX } from '../retrieval/schemas.ts';
import { askFiles, type AskDeps } from './ask.ts';
import type { ApiKeyScope } from '../auth/api-key-scopes.ts';
import { assertKeyScope, type AuthUser } from '../users/authenticate.ts';

// The MCP server (docs/DECISIONS.md "MCP server"): the service's documents as tools for an agent,
// through the official SDK. One server is made per request, for its caller: the Streamable HTTP
// transport runs stateless, so any instance answers any request and nothing is kept between them.
// Each tool answers with text content (what a model reads) and `structuredContent` matching its
// outputSchema (what a program reads). A tool's failure is a result with `isError: true`: the
// message of a domain error (another user's collection or file is "not found", as on the HTTP
// routes, so nothing tells it exists), or a generic one for anything else (logged, never echoed).

export interface McpDeps extends AskDeps {
  collections: CollectionRepository;
  files: FileRepository;
  /** A completed file's part: its text and place (the route GET /files/{fileId}/parts/{part} without the drawing). */
  readPart: (input: { userId: string; fileId: string; part: number }) => Promise<PartText>;
  /** The per-user request limits: `search` and `ask` count as messages, as POST /search does. */
  limits?: Pick<UserLimits, 'takeRequest'>;
}

export const MCP_SERVER_INFO = { name: 'chat-orders-pdf-service', version: '1.0.0' };

/** Items a list tool returns at most per call (the rest through `cursor`). */
const LIST_LIMIT = 100;

const cursorInput = z
  .optional(z.string().check(z.maxLength(2_000)))
  .check(z.describe('The nextCursor of the previous call, for the next items'));

const questionInput = {
  question: z.string().check(z.trim(), z.minLength(1), z.maxLength(4_000), z.describe('The question, in words')),
  collectionId: z.optional(cuidSchema).check(z.describe('Only the files of this collection')),
  fileIds: z
    .optional(z.array(cuidSchema).check(z.minLength(1), z.maxLength(100)))
    .check(z.describe('Only these files')),
};

const fileOutput = z.object({
  fileId: z.string(),
  fileName: z.string(),
  status: z.string(),
  pages: z.optional(z.number()),
  createdAt: z.string(),
});

const outputs = {
  search: {
    passages: z.array(
      z.object({ fileId: z.string(), fileName: z.string(), page: z.number(), quote: z.string(), score: z.number() }),
    ),
  },
  ask: {
    answer: z.string(),
    citations: z.array(
      z.object({
        index: z.number(),
        fileId: z.string(),
        fileName: z.string(),
        page: z.number(),
        quote: z.string(),
        verified: z.boolean(),
      }),
    ),
  },
  list_collections: {
    collections: z.array(z.object({ id: z.string(), name: z.string(), fileCount: z.number(), createdAt: z.string() })),
    nextCursor: z.optional(z.string()),
  },
  list_files: { files: z.array(fileOutput), nextCursor: z.optional(z.string()) },
  read_part: {
    fileId: z.string(),
    fileName: z.string(),
    part: z.number(),
    parts: z.number(),
    location: partLocationSchema,
    text: z.string(),
  },
};

/** A tool's result: its structured content, and the same as text (or a short text of its own). */
function result(structured: Record<string, unknown>, text = JSON.stringify(structured, null, 2)): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

/** A tool's failure as an error result the agent can read; only a domain error's message leaves. */
function failure(tool: string, err: unknown): CallToolResult {
  const known = err instanceof DomainError;
  if (!known) logger.error('mcp tool failed', { tool, error: asError(err) });
  return { isError: true, content: [{ type: 'text', text: known ? err.message : 'Internal error' }] };
}

/** A list's page: LIST_LIMIT items after the cursor a previous call returned (a bad cursor is invalid input). */
const pageOf = (cursor: string | undefined) => ({ limit: LIST_LIMIT, ...(cursor !== undefined && { cursor }) });

/**
 * The MCP server of one request, acting for its caller. An API key reaches the server with the
 * route's scope (`read`: listing and reading); `search` and `ask` need the key's `search` and
 * `chat` scopes too, as POST /search and a chat's message do (docs/DECISIONS.md "API keys").
 */
export function mcpServer(deps: McpDeps, caller: Pick<AuthUser, 'id' | 'apiKey'>): McpServer {
  const server = new McpServer(MCP_SERVER_INFO, { capabilities: { tools: {} } });
  const userId = caller.id;
  /** A tool's work, within the key's scopes; any failure an error result. */
  const guarded =
    <A>(tool: string, run: (args: A) => Promise<CallToolResult>, scope?: ApiKeyScope) =>
    async (args: A): Promise<CallToolResult> => {
      try {
        if (scope) assertKeyScope(caller.apiKey, scope, 'tool');
        return await run(args);
      } catch (err) {
        return failure(tool, err);
      }
    };

  server.registerTool(
    'search',
    {
      title: 'Search documents',
      description: `The passages of your completed documents that best match a query (a collection's, some files, or all), best first; at most ${SEARCH_K_MAX}.`,
      inputSchema: searchFilesBody,
      outputSchema: outputs.search,
      annotations: { readOnlyHint: true },
    },
    guarded(
      'search',
      async (args) => {
        await deps.limits?.takeRequest(userId, 'messages');
        const passages = await searchFiles(deps, { userId, ...args });
        const text = passages.length
          ? passages.map((p, i) => `[${i + 1}] ${p.fileName}, page ${p.page}: ${p.quote}`).join('\n')
          : 'No passage found.';
        return result({ passages }, text);
      },
      'search',
    ),
  );

  server.registerTool(
    'ask',
    {
      title: 'Ask the documents',
      description:
        'An answer to a question from your completed documents (a collection, some files, or all), citing passages as [n]; each citation gives its file, page and verbatim quote.',
      inputSchema: questionInput,
      outputSchema: outputs.ask,
    },
    guarded(
      'ask',
      async (args) => {
        await deps.limits?.takeRequest(userId, 'messages');
        const { answer, citations } = await askFiles(deps, { userId, ...args });
        const sources = citations.map((c) => `[${c.index}] ${c.fileName}, page ${c.page}: "${c.quote}"`);
        return result(
          { answer, citations },
          [answer, ...(sources.length ? ['', 'Sources:', ...sources] : [])].join('\n'),
        );
      },
      'chat',
    ),
  );

  server.registerTool(
    'list_collections',
    {
      title: 'List collections',
      description: 'Your collections of documents, newest first.',
      inputSchema: { cursor: cursorInput },
      outputSchema: outputs.list_collections,
      annotations: { readOnlyHint: true },
    },
    guarded('list_collections', async ({ cursor }) => {
      const page = await listCollections(deps, { userId, ...pageOf(cursor) });
      const collections = page.items.map((c) => ({
        id: c.id,
        name: c.name,
        fileCount: c.fileCount,
        createdAt: c.createdAt,
      }));
      return result({ collections, nextCursor: encodeCursor(page.lastKey) });
    }),
  );

  server.registerTool(
    'list_files',
    {
      title: 'List documents',
      description: 'Your documents (or a collection’s) with their status and page count, newest first.',
      inputSchema: {
        collectionId: z.optional(cuidSchema).check(z.describe('Only the files of this collection')),
        cursor: cursorInput,
      },
      outputSchema: outputs.list_files,
      annotations: { readOnlyHint: true },
    },
    guarded('list_files', async ({ collectionId, cursor }) => {
      const page =
        collectionId === undefined
          ? await listFiles(deps, { userId, ...pageOf(cursor) })
          : await listCollectionFiles(deps, { userId, collectionId, ...pageOf(cursor) });
      const files = page.items.map((f) => ({
        fileId: f.fileId,
        fileName: f.fileName,
        status: f.status,
        pages: f.pages,
        createdAt: f.createdAt,
      }));
      return result({ files, nextCursor: encodeCursor(page.lastKey) });
    }),
  );

  server.registerTool(
    'read_part',
    {
      title: 'Read a part of a document',
      description:
        'The text of one part of a completed document: a PDF’s page (part 1 is the first page), as the citations’ quotes index it.',
      inputSchema: {
        fileId: cuidSchema.check(z.describe('The document')),
        part: z.number().check(z.int(), z.gte(1), z.lte(100_000), z.describe('The part (a PDF: its 1-based page)')),
      },
      outputSchema: outputs.read_part,
      annotations: { readOnlyHint: true },
    },
    guarded('read_part', async ({ fileId, part }) => {
      const read = await deps.readPart({ userId, fileId, part });
      return result(
        { fileId, fileName: read.fileName, part, parts: read.parts, location: read.location, text: read.text },
        `${read.fileName}, part ${part} of ${read.parts}:\n\n${read.text}`,
      );
    }),
  );

  return server;
}
