import * as z from '../zod.ts';
import type { NamedSchemas, RouteContracts } from '../openapi/contract.ts';
import { example } from '../openapi/examples.ts';
import { USER_EXAMPLE, userSchema } from '../users/schemas.ts';
import { USAGE_EXAMPLE, usageSchema } from './schemas.ts';

// The OpenAPI contracts of the usage routes (infra/openapi.ts alone imports this file, so no
// function bundle builds them): the schemas the document names, and what it says of each route.

const meSchema = z
  .object({ user: userSchema, usage: usageSchema })
  .check(example({ user: USER_EXAMPLE, usage: USAGE_EXAMPLE }));

export const schemas: NamedSchemas = { Me: meSchema, AccountUsage: usageSchema };

export const contracts: RouteContracts = {
  'get-me': {
    summary: 'The signed-in user and their usage',
    description:
      "The user as POST /auth returns them, and their usage: tokens today and this month by model, the daily token budget with the credits bought with orders and what is left, pages ingested and recognised by OCR, bytes stored, files and chats. Read from counters kept as the work happens (a few items), not by listing the user's data.",
    responses: { 200: meSchema },
    errors: [401],
  },
};
