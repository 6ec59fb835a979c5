import * as z from '../zod.ts';
import type { RouteContracts } from '../openapi/contract.ts';
import { example } from '../openapi/examples.ts';

// The OpenAPI contracts of the erasure routes (infra/openapi.ts alone imports this file, so no
// function bundle builds them): the schemas the document names, and what it says of each route.

const erasureResponse = z
  .object({
    status: z
      .enum(['erased', 'pending'])
      .check(
        z.describe(
          '`erased`: nothing of the user is left; `pending`: the rest is erased in the background within five minutes',
        ),
      ),
  })
  .check(example({ status: 'erased' }));

export const contracts: RouteContracts = {
  'delete-me': {
    summary: 'Erase the signed-in user and everything of theirs',
    description:
      'Every token of the user stops working at once. Chats, messages, shares, feedback, files (records, ' +
      'chunks, objects, vectors), queued work and counters are deleted; orders are kept for accounting ' +
      'under an opaque tombstone instead of the user. Signing in again with the same identity starts a new ' +
      'user. Repeating the call (or the background sweep) finishes an erasure cut short.',
    responses: { 202: erasureResponse },
    errors: [401],
  },
};
