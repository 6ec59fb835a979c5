import * as z from './zod.ts';

// Schema pieces every domain's contract shares (ids, list pages).

/**
 * An id: a CUID2 (what createId() produces: a letter, then 23 lower-case letters or digits), or a
 * legacy CUID (version 1: `c` and 24 more, as older clients of this API hold). A well-formed id
 * that names nothing is then not found, not invalid.
 */
export const cuidSchema = z.string().check(z.regex(/^(?:[a-z][a-z0-9]{23}|c[a-z0-9]{24})$/, 'Must be a CUID'));

/** `?limit=&cursor=` of every list route. */
export const pageQuerySchema = z.strictObject({
  limit: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(100)), 20),
  cursor: z.optional(z.string().check(z.maxLength(2048))),
});
