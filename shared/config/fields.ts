import * as z from '../zod.ts';

// The kinds of value the settings take, shared by the pieces of the configuration.

export const bool = z.pipe(
  z.enum(['true', 'false', '1', '0', 'yes', 'no']),
  z.transform((v) => v === 'true' || v === '1' || v === 'yes'),
);
export const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().check(z.int(), z.gte(min), z.lte(max));
export const csv = z.pipe(
  z.string(),
  z.transform((v) =>
    v
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  ),
);
export const optionalUrl = z.optional(z.url({ protocol: /^https?$/ }));
export const str = () => z.string().check(z.minLength(1));
