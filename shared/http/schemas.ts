import { z } from 'zod';

// Request pieces shared by every route.

/** A CUID2 id (what createId() produces: a letter, then 23 lower-case letters or digits). */
export const cuidSchema = z.string().regex(/^[a-z][a-z0-9]{23}$/, 'Must be a CUID');

/** `?limit=&cursor=` of every list route. */
export const pageQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(2048).optional(),
});
export type PageQuery = z.infer<typeof pageQuerySchema>;
