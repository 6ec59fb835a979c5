import * as z from '../zod.ts';
import type { NamedSchemas, RouteContracts } from '../openapi/contract.ts';
import { example } from '../openapi/examples.ts';
import { USER_EXAMPLE, userSchema } from './schemas.ts';

// The OpenAPI contracts of the users routes (infra/openapi.ts alone imports this file, so no
// function bundle builds them): the schemas the document names, and what it says of each route.

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
