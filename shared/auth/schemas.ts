import * as z from '../zod.ts';
import { idParam, pageQuerySchema } from '../schemas.ts';
import type { NamedSchemas, RouteContracts } from '../openapi/contract.ts';
import { example, EXAMPLE_IDS as ids, EXAMPLE_TIME as at } from '../openapi/examples.ts';
import { API_KEY_SCOPES } from './api-key-scopes.ts';

// API keys (POST/GET /me/api-keys, DELETE /me/api-keys/{id}): the request and response shapes.

const API_KEY_NAME_MAX_CHARS = 100;
export const API_KEY_MAX_DAYS = 3_650;

const scopeSchema = z.enum(API_KEY_SCOPES);

export const createApiKeyBody = z
  .strictObject({
    name: z
      .string()
      .check(
        z.trim(),
        z.minLength(1),
        z.maxLength(API_KEY_NAME_MAX_CHARS),
        z.describe(`What the key is for, 1 to ${API_KEY_NAME_MAX_CHARS} characters`),
      ),
    scopes: z
      .optional(z.array(scopeSchema).check(z.minLength(1), z.maxLength(API_KEY_SCOPES.length * 2)))
      .check(
        z.describe(
          'What the key may do: chat (prompts, replies, OpenAI-compatible completions), search (POST /search), ' +
            'files (uploads, ingestion, collections), read (every read); default: all four',
        ),
      ),
    expiresInDays: z
      .optional(z.number().check(z.int(), z.gte(1), z.lte(API_KEY_MAX_DAYS)))
      .check(z.describe(`Days until the key stops working, 1 to ${API_KEY_MAX_DAYS}; absent: never`)),
  })
  .check(example({ name: 'build server', scopes: ['chat', 'read'], expiresInDays: 90 }));

export const apiKeyParams = z.strictObject({ id: idParam('apiKey') });
export const listApiKeysQuery = pageQuerySchema;

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
    responses: { 200: z.array(apiKeySchema) },
    headers: ['x-next-cursor'],
    errors: [400, 401, 403],
  },
  'revoke-api-key': {
    summary: 'Revoke an API key: refused from the next request on',
    description: `Another user's key is 404. ${KEYS_BY_TOKEN_ONLY}`,
    params: apiKeyParams,
    responses: {
      200: z.object({ id: z.string(), revoked: z.literal(true) }).check(example({ id: ids.apiKey, revoked: true })),
    },
    errors: [400, 401, 403, 404],
  },
};
