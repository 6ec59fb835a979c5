import * as z from '../zod.ts';
import { partLocationSchema } from '../files/schemas.ts';
import type { NamedSchemas, RouteContracts } from '../openapi/contract.ts';
import { example, EXAMPLE_IDS as ids } from '../openapi/examples.ts';
import { searchFilesBody } from './schemas.ts';

// The OpenAPI contracts of the retrieval routes (infra/openapi.ts alone imports this file, so no
// function bundle builds them): the schemas the document names, and what it says of each route.

const passageSchema = z
  .object({
    fileId: z.string(),
    fileName: z.string(),
    page: z.number().check(z.int(), z.describe("1-based page number of the quote (another format: the part's number)")),
    part: z.number().check(z.int(), z.describe('1-based part of the document (GET /files/{fileId}/parts/{part})')),
    location: partLocationSchema,
    quote: z.string().check(z.describe('A short passage that appears verbatim in the file')),
    charStart: z
      .optional(z.number().check(z.int(), z.gte(0)))
      .check(z.describe("Where the quote starts in its part's text; set when verified")),
    charEnd: z.optional(z.number().check(z.int(), z.gte(0))).check(z.describe('Where it ends (exclusive)')),
    verified: z.boolean().check(z.describe("True when the quote occurs in its part's text at charStart")),
    score: z.number().check(z.describe('Similarity of the passage to the query')),
  })
  .check(
    example({
      fileId: ids.file,
      fileName: 'paper.pdf',
      page: 2,
      part: 2,
      location: { type: 'page', page: 2 },
      quote: 'Trace trees cover a program by forming one tree per loop.',
      charStart: 412,
      charEnd: 470,
      verified: true,
      score: 0.82,
    }),
  );

export const schemas: NamedSchemas = { SearchRequest: searchFilesBody, Passage: passageSchema };

export const contracts: RouteContracts = {
  'search-files': {
    summary: "The best passages of the caller's completed files for a query, best first",
    description:
      'Ranked as a file chat ranks them (dense and BM25 fused). Over a collection (collectionId), some files (fileIds), ' +
      "both (the named files in the collection), or every file of the caller's when neither is given; files not " +
      "completed are not searched. Anyone else's collection or file is 404. The query's embedding is charged to the " +
      'daily token budget (429 when it is spent) and counts against the messages rate limit.',
    body: searchFilesBody,
    responses: { 200: z.array(passageSchema) },
    errors: [400, 401, 404, 409, 429, 502, 504],
  },
};
