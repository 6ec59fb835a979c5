import * as z from '../zod.ts';
import { cuidSchema, idParam, pageQuerySchema } from '../schemas.ts';
import { example, EXAMPLE_IDS as ids, EXAMPLE_TIME as at } from '../openapi/examples.ts';

// Products: request schemas, the payload schema and the contracts of the product routes.
// Product routes answer bare objects and `{ message, errors? }` errors, like the order routes.

/** Upper bound on a price: 1e10 minor units (a hundred million in a two-decimal currency). */
const MAX_PRICE_CENTS = 10_000_000_000;

// ISO 4217 codes the runtime's ICU knows (full ICU ships with Node and Lambda).
const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

const currencySchema = z.string().check(
  z.regex(/^[A-Z]{3}$/, 'Must be an upper-case ISO 4217 currency code, e.g. EUR'),
  z.refine((code) => CURRENCIES.has(code), { message: 'Not an ISO 4217 currency code' }),
  z.describe('ISO 4217 currency code, upper case'),
);

const name = z.string().check(z.trim(), z.minLength(1, 'Must not be empty'), z.maxLength(200));
const description = z.string().check(z.maxLength(2000));
const MAX_GRANTS_TOKENS = 1_000_000_000;
const grantsTokens = z
  .number()
  .check(
    z.int('Must be a whole number of tokens'),
    z.gte(0, 'Must not be negative'),
    z.lte(MAX_GRANTS_TOKENS, `Must be at most ${MAX_GRANTS_TOKENS}`),
    z.describe("Tokens added to the buyer's credits per unit once an order of it is paid (docs/DECISIONS.md, Credits)"),
  );
const priceCents = z
  .number()
  .check(
    z.int('Must be an integer number of minor units (cents)'),
    z.gte(0, 'Must not be negative'),
    z.lte(MAX_PRICE_CENTS),
    z.describe('Price in minor units of the currency (e.g. cents)'),
  );

export const productSchema = z
  .object({
    id: cuidSchema,
    name: z.string(),
    description: z.string(),
    priceCents: z.number().check(z.int()),
    currency: z.string(),
    grantsTokens: z.optional(grantsTokens),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .check(
    example({
      id: ids.product,
      name: 'Reading lamp',
      description: 'A warm, dimmable desk lamp',
      priceCents: 2499,
      currency: 'EUR',
      createdAt: at,
      updatedAt: at,
    }),
  );
export type Product = z.infer<typeof productSchema>;

export const createProductBody = z
  .strictObject({
    name,
    description: z._default(description, ''),
    priceCents,
    currency: currencySchema,
    grantsTokens: z.optional(grantsTokens),
  })
  .check(
    example({ name: 'Reading lamp', description: 'A warm, dimmable desk lamp', priceCents: 2499, currency: 'EUR' }),
  );
export type CreateProductInput = z.infer<typeof createProductBody>;

export const updateProductBody = z
  .strictObject({
    name: z.optional(name),
    description: z.optional(description),
    priceCents: z.optional(priceCents),
    currency: z.optional(currencySchema),
    grantsTokens: z.optional(grantsTokens),
  })
  .check(
    z.refine((b) => Object.values(b).some((v) => v !== undefined), {
      message: 'Give at least one of name, description, priceCents, currency, grantsTokens',
    }),
    example({ priceCents: 1999 }),
  );
export type UpdateProductInput = z.infer<typeof updateProductBody>;

export const productParams = z.strictObject({ id: idParam('product') });
export const productListQuery = pageQuerySchema;
