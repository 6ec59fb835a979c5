import * as z from './zod.ts';
import { example, EXAMPLE_IDS } from './openapi/examples.ts';

// Schema pieces every domain's contract shares (ids, list pages).

/**
 * An id: a CUID2 (what createId() produces: a letter, then 23 lower-case letters or digits), or a
 * legacy CUID (version 1: `c` and 24 more, as older clients of this API hold). A well-formed id
 * that names nothing is then not found, not invalid.
 */
export const cuidSchema = z.string().check(z.regex(/^(?:[a-z][a-z0-9]{23}|c[a-z0-9]{24})$/, 'Must be a CUID'));

/** An id in a path (`{chatId}`), with an example of what it names (shared/openapi/examples.ts). */
export const idParam = (kind: keyof typeof EXAMPLE_IDS) => cuidSchema.check(example(EXAMPLE_IDS[kind]));

/** A URL the caller gives (trimmed, not empty, at most `maxChars`); where it may lead is the download guard's to check. */
export const urlField = (maxChars: number, description: string) =>
  z.string().check(z.trim(), z.minLength(1), z.maxLength(maxChars), z.describe(description));

/** A cursor as the lists issue them (opaque: base64url of the last key read). */
const CURSOR_EXAMPLE = Buffer.from(
  JSON.stringify({
    PK: `CHAT#${EXAMPLE_IDS.chat}`,
    SK: 'META',
    GSI1PK: `USER#${EXAMPLE_IDS.user}`,
    GSI1SK: `CHAT#2026-11-24T09:30:00.000Z#${EXAMPLE_IDS.chat}`,
  }),
).toString('base64url');

/** `?limit=&cursor=` of every list route. */
export const pageQuerySchema = z.strictObject({
  limit: z
    ._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(100)), 20)
    .check(z.describe('Items per page, 1 to 100'), example(20)),
  cursor: z
    .optional(z.string().check(z.maxLength(2048)))
    .check(
      z.describe('The x-next-cursor header of the previous page (absent: the first page)'),
      example(CURSOR_EXAMPLE),
    ),
});
