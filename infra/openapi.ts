import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod/mini';
import { httpRouteList } from './routes.ts';
import type { RouteContract, RouteContracts } from '../shared/openapi/contract.ts';
import { projectRoot } from './local/runtime.ts';

// Generates docs/openapi.json from the route manifest and the zod schemas the handlers use
// (every `shared/<domain>/schemas.ts` exports `contracts`). `npm run openapi` rewrites it;
// a test fails when the committed document is stale.

type Json = Record<string, unknown>;

export async function loadContracts(): Promise<RouteContracts> {
  const all: RouteContracts = {};
  const shared = join(projectRoot, 'shared');
  for (const dir of (await readdir(shared, { withFileTypes: true })).filter((d) => d.isDirectory())) {
    const files = await readdir(join(shared, dir.name));
    if (!files.includes('schemas.ts')) continue;
    const mod = (await import(pathToFileURL(join(shared, dir.name, 'schemas.ts')).href)) as { contracts?: RouteContracts };
    Object.assign(all, mod.contracts ?? {});
  }
  return all;
}

const schema = (s: z.ZodMiniType, io: 'input' | 'output') => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(s, { io, unrepresentable: 'any' }) as Json;
  return rest;
};

function parameters(where: 'path' | 'query', s: z.ZodMiniType | undefined): Json[] {
  if (!s) return [];
  const js = schema(s, 'input') as { properties?: Record<string, Json>; required?: string[] };
  return Object.entries(js.properties ?? {}).map(([name, p]) => ({
    name,
    in: where,
    required: where === 'path' || (js.required ?? []).includes(name),
    schema: p,
    ...(typeof p.description === 'string' && { description: p.description }),
  }));
}

const envelopeError = {
  type: 'object',
  required: ['success', 'statusCode', 'message'],
  properties: {
    success: { const: false },
    statusCode: { type: 'integer', description: 'Always equals the HTTP status' },
    message: { type: 'string' },
    errors: { $ref: '#/components/schemas/FieldErrors' },
  },
};
const bareError = {
  type: 'object',
  required: ['message'],
  properties: { message: { type: 'string' }, errors: { $ref: '#/components/schemas/FieldErrors' } },
};
const errorDescriptions: Record<number, string> = {
  400: 'Invalid input (field-level `errors`)',
  401: 'Missing, invalid or expired token',
  403: 'Not allowed',
  404: 'Not found (or not yours)',
  405: 'Method not allowed',
  409: 'Conflicts with the current state',
  413: 'Body too large',
  415: 'Body is not JSON',
  429: 'A per-user limit was reached (requests per minute, or the daily token budget); see Retry-After',
  500: 'Internal error (the message never carries details)',
  502: 'An upstream service failed',
  503: 'A dependency is unavailable; retry later',
};

export async function buildOpenApi(): Promise<Json> {
  const contracts = await loadContracts();
  const paths: Record<string, Record<string, Json>> = {};
  const missing: string[] = [];
  for (const route of httpRouteList) {
    const contract = contracts[route.name as keyof RouteContracts] as RouteContract | undefined;
    if (!contract) {
      missing.push(route.name);
      continue;
    }
    const success = (payload: z.ZodMiniType | null | undefined, status: number): Json => {
      if (status === 204) return { description: 'No content' };
      const data = payload ? schema(payload, 'output') : {};
      const body =
        route.shape === 'bare'
          ? data
          : {
              type: 'object',
              required: ['success', 'statusCode', 'message', 'data'],
              properties: {
                success: { const: true },
                statusCode: { const: status },
                message: { type: 'string' },
                data,
              },
            };
      const content: Json = { 'application/json': { schema: body } };
      if (contract.streams) {
        content['text/event-stream'] = {
          schema: { type: 'string' },
          description:
            'With `stream: true`: one `data: {"content": "…"}` event per model delta; `event: sources` (file chats); `event: error` on a failure after the stream began; `event: usage`; always last `data: [DONE]`.',
        };
      }
      const headers = Object.fromEntries(
        ['x-request-id', ...(contract.headers ?? [])].map((h) => [h, { schema: { type: 'string' } }]),
      );
      return { description: 'Success', headers, content };
    };
    const responses: Json = {};
    for (const [status, payload] of Object.entries(contract.responses)) responses[status] = success(payload, Number(status));
    for (const status of [...new Set([...contract.errors, ...(route.auth === 'idp' ? [] : [401])])].sort()) {
      responses[status] = {
        description: errorDescriptions[status] ?? 'Error',
        content: { 'application/json': { schema: route.shape === 'bare' ? bareError : envelopeError } },
      };
    }
    const operation: Json = {
      operationId: route.name.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()),
      summary: contract.summary,
      ...(contract.description && { description: contract.description }),
      tags: [route.path.split('/')[1]],
      security: [route.auth === 'idp' ? { identityProviderToken: [] } : { serviceToken: [] }],
      ...(route.auth === 'admin' && { 'x-required-role': 'admin' }),
      parameters: [...parameters('path', contract.params), ...parameters('query', contract.query)],
      ...(contract.body && {
        requestBody: { required: true, content: { 'application/json': { schema: schema(contract.body, 'input') } } },
      }),
      responses,
    };
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation;
  }
  if (missing.length) throw new Error(`No contract (shared/<domain>/schemas.ts) for routes: ${missing.join(', ')}`);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Chat, Orders and PDF Ingestion Service',
      version: '1.0.0',
      description:
        'Generated from the route manifest and the zod schemas (npm run openapi). Chat, message, auth, upload and PDF routes answer in the envelope `{ success, statusCode, message, data }`; order and product routes answer bare objects and `{ message }` errors.',
    },
    servers: [{ url: 'http://localhost:3000/api/v1', description: 'npm start' }, { url: '{base_url}', variables: { base_url: { default: 'https://example.execute-api.us-east-1.amazonaws.com/api/v1' } } }],
    components: {
      securitySchemes: {
        identityProviderToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: "The identity provider's ID token" },
        serviceToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The service JWT from POST /auth' },
      },
      schemas: {
        FieldErrors: {
          type: 'array',
          items: {
            type: 'object',
            required: ['path', 'message'],
            properties: { path: { type: 'string', examples: ['body.type'] }, message: { type: 'string' }, code: { type: 'string' } },
          },
        },
      },
    },
    paths,
  };
}

export const OPENAPI_PATH = join(projectRoot, 'docs', 'openapi.json');

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const doc = await buildOpenApi();
  await writeFile(OPENAPI_PATH, `${JSON.stringify(doc, null, 2)}\n`);
  console.log(`wrote ${OPENAPI_PATH} (${Object.keys(doc.paths as Json).length} paths)`);
}
