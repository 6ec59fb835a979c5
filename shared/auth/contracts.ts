import * as z from '../zod.ts';
import { doneSchema, byId, pageOf, type NamedSchemas, type RouteContracts } from '../openapi/contract.ts';
import { example, EXAMPLE_IDS as ids, EXAMPLE_TIME as at } from '../openapi/examples.ts';
import { scopeSchema, createApiKeyBody, apiKeyParams, listApiKeysQuery } from './schemas.ts';

// The OpenAPI contracts of the auth routes (infra/openapi.ts alone imports this file, so no
// function bundle builds them): the schemas the document names, and what it says of each route.

const KEY_EXAMPLE = {
  id: ids.apiKey,
  name: 'build server',
  scopes: ['chat', 'read'],
  createdAt: at,
  expiresAt: '2027-02-22T09:30:00.000Z',
};

const apiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    scopes: z.array(scopeSchema),
    createdAt: z.iso.datetime(),
    expiresAt: z.nullable(z.iso.datetime()).check(z.describe('When the key stops working; null: never')),
    lastUsedAt: z
      .nullable(z.iso.datetime())
      .check(z.describe('When the key was last used (to the minute); null: never used')),
  })
  .check(example({ ...KEY_EXAMPLE, lastUsedAt: null }));

const createdApiKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    scopes: z.array(scopeSchema),
    key: z
      .string()
      .check(
        z.describe(
          'The key: `cops_` then its id and a 256-bit secret. Shown this once and stored only as a hash: keep it now',
        ),
      ),
    createdAt: z.iso.datetime(),
    expiresAt: z.nullable(z.iso.datetime()),
  })
  .check(example({ ...KEY_EXAMPLE, key: `cops_${ids.apiKey}_${'x'.repeat(43)}` }));

export const schemas: NamedSchemas = { ApiKey: apiKeySchema, CreatedApiKey: createdApiKeySchema };

const KEYS_BY_TOKEN_ONLY = 'Only with a service token (POST /auth): an API key cannot manage keys (403).';

export const contracts: RouteContracts = {
  'create-api-key': {
    summary: 'Create an API key for a program',
    description:
      'The key works as `Authorization: Bearer <key>` wherever a service token does, within its scopes (403 ' +
      "outside them), counted against its user's limits and budget, until it expires, is revoked or the user " +
      `is deleted. The key is in this response only. ${KEYS_BY_TOKEN_ONLY} 409 TOO_MANY_API_KEYS past ` +
      'API_KEYS_MAX_PER_USER.',
    body: createApiKeyBody,
    responses: { 201: createdApiKeySchema },
    errors: [400, 401, 403, 409],
  },
  'list-api-keys': {
    summary: "The caller's API keys, newest first, paged (never the keys themselves)",
    description: KEYS_BY_TOKEN_ONLY,
    query: listApiKeysQuery,
    ...pageOf(apiKeySchema),
    errors: [400, 401, 403],
  },
  'revoke-api-key': {
    summary: 'Revoke an API key: refused from the next request on',
    description: `Another user's key is 404. ${KEYS_BY_TOKEN_ONLY}`,
    ...byId(apiKeyParams, 403),
    responses: { 200: doneSchema({ id: ids.apiKey }, 'revoked') },
  },
};
