import * as z from '../zod.ts';
import { idParam, pageQuerySchema } from '../schemas.ts';
import { example } from '../openapi/examples.ts';
import { API_KEY_SCOPES } from './api-key-scopes.ts';

// API keys (POST/GET /me/api-keys, DELETE /me/api-keys/{id}): the request and response shapes.

const API_KEY_NAME_MAX_CHARS = 100;
export const API_KEY_MAX_DAYS = 3_650;

export const scopeSchema = z.enum(API_KEY_SCOPES);

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
