import * as z from '../zod.ts';
import { cuidSchema } from '../schemas.ts';
import { example, EXAMPLE_IDS as ids } from '../openapi/examples.ts';

// POST /search: passages across the caller's files.

export const SEARCH_K_MAX = 50;
const SEARCH_K_DEFAULT = 8;
const SEARCH_QUERY_MAX_CHARS = 2_000;
const SEARCH_FILE_IDS_MAX = 100;

export const searchFilesBody = z
  .strictObject({
    query: z
      .string()
      .check(
        z.trim(),
        z.minLength(1),
        z.maxLength(SEARCH_QUERY_MAX_CHARS),
        z.describe(`What to look for, in words; 1 to ${SEARCH_QUERY_MAX_CHARS} characters`),
      ),
    collectionId: z
      .optional(cuidSchema)
      .check(z.describe("Only the files of this collection of the caller's (with fileIds: those of them in it)")),
    fileIds: z
      .optional(z.array(cuidSchema).check(z.minLength(1), z.maxLength(SEARCH_FILE_IDS_MAX)))
      .check(z.describe(`Only these files of the caller's (1 to ${SEARCH_FILE_IDS_MAX})`)),
    k: z
      ._default(z.number().check(z.int(), z.gte(1), z.lte(SEARCH_K_MAX)), SEARCH_K_DEFAULT)
      .check(z.describe(`Passages wanted, 1 to ${SEARCH_K_MAX} (default ${SEARCH_K_DEFAULT})`)),
  })
  .check(example({ query: 'How are loops compiled?', collectionId: ids.collection, k: 5 }));
