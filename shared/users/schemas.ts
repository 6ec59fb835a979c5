import * as z from '../zod.ts';
import type { NamedSchemas, RouteContracts } from '../openapi/contract.ts';
import { example, EXAMPLE_IDS as ids, EXAMPLE_TIME as at } from '../openapi/examples.ts';

export const USER_EXAMPLE = {
  id: ids.user,
  email: 'you@example.com',
  role: 'user',
  name: 'You',
  address: null,
  picture: null,
  user_id: 'local|you@example.com',
  verified: true,
  createdAt: at,
  updatedAt: at,
};

export const userSchema = z
  .object({
    id: z.string(),
    email: z.email(),
    role: z.enum(['user', 'admin']),
    name: z.optional(z.string()),
    address: z.nullable(z.string()),
    picture: z.nullable(z.string()),
    user_id: z.string().check(z.describe("The identity provider's user id")),
    verified: z.boolean(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .check(example(USER_EXAMPLE));

const signInResponse = z
  .object({
    user: userSchema,
    token: z.string().check(z.describe('Service JWT (HS256), valid for 30 days; send as Authorization: Bearer')),
  })
  .check(
    example({
      user: USER_EXAMPLE,
      token: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1MmI3YzRkOWUxZjZnM2g4ajVrMG03bnAifQ.…',
    }),
  );

/** The named component schemas of the OpenAPI document. */
export const schemas: NamedSchemas = { User: userSchema, SignInResult: signInResponse };

export const contracts: RouteContracts = {
  'sign-in': {
    summary: 'Exchange an identity-provider ID token for a service JWT',
    description:
      'Send the ID token as Authorization: Bearer. Creates the user on first sign-in (201); refreshes name, picture and verified otherwise (200).',
    responses: { 200: signInResponse, 201: signInResponse },
    errors: [401, 503],
  },
};
