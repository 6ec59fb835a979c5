import * as z from '../zod.ts';

// Request pieces shared by every route.

/** A CUID2 id (what createId() produces: a letter, then 23 lower-case letters or digits). */
export const cuidSchema = z.string().check(z.regex(/^[a-z][a-z0-9]{23}$/, 'Must be a CUID'));

/** `?limit=&cursor=` of every list route. */
export const pageQuerySchema = z.strictObject({
  limit: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(100)), 20),
  cursor: z.optional(z.string().check(z.maxLength(2048))),
});
export type PageQuery = z.infer<typeof pageQuerySchema>;
