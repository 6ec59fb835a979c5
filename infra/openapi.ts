import { readdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod/mini';
import { httpRouteList } from './routes.ts';
import type { NamedSchemas, RouteContract, RouteContracts } from '#shared/openapi/contract.ts';
import { errorBody, successMessage } from '#shared/http/envelope.ts';
import {
  bareError,
  COMPONENTS,
  envelopeError,
  errorDescriptions,
  errorExample,
  OPENAI_MODEL_NOT_FOUND,
  openAiError,
  SSE_DESCRIPTION,
} from './openapi-errors.ts';

// Generates docs/openapi.json from the route manifest and the zod schemas the handlers use
// (every `shared/<domain>/contracts.ts` exports `contracts`, and `schemas`: the ones the document
// names as components, so generated clients get named types). Only this generator imports the
// contracts, so no function bundle builds them (docs/DECISIONS.md "Routes: definition and deployment"). `npm run openapi` rewrites it;
// a test fails when the committed document is stale.

type Json = Record<string, unknown>;

const projectRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');

export async function loadContracts(): Promise<RouteContracts> {
  return (await loadSchemaModules()).contracts;
}

async function loadSchemaModules(): Promise<{ contracts: RouteContracts; named: NamedSchemas }> {
  const contracts: RouteContracts = {};
  const named: NamedSchemas = {};
  const shared = join(projectRoot, 'shared');
  for (const dir of (await readdir(shared, { withFileTypes: true })).filter((d) => d.isDirectory())) {
    const files = await readdir(join(shared, dir.name));
    if (!files.includes('contracts.ts')) continue;
    const mod = (await import(pathToFileURL(join(shared, dir.name, 'contracts.ts')).href)) as {
      contracts?: RouteContracts;
      schemas?: NamedSchemas;
    };
    Object.assign(contracts, mod.contracts ?? {});
    for (const [name, s] of Object.entries(mod.schemas ?? {})) {
      if (named[name]) throw new Error(`Two schemas are named ${name}`);
      named[name] = s;
    }
  }
  return { contracts, named };
}

/**
 * zod → JSON Schema with the named schemas as `$ref`s: zod extracts every schema the registry
 * gives an id into `$defs`; those become components (one definition per name: a schema whose
 * input and output forms differ must not be named) and the references follow them.
 */
function schemaWriter(named: NamedSchemas) {
  const registry = z.registry<{ id: string }>();
  for (const [id, s] of Object.entries(named)) registry.add(s, { id });
  const components: Record<string, Json> = {};
  const relink = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(relink);
    if (!node || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node).map(([k, v]) => [
        k,
        k === '$ref' && typeof v === 'string' ? v.replace('#/$defs/', COMPONENTS) : relink(v),
      ]),
    );
  };
  const write = (s: z.ZodMiniType, io: 'input' | 'output'): Json => {
    const {
      $schema: _drop,
      $defs,
      ...rest
    } = z.toJSONSchema(s, {
      io,
      unrepresentable: 'any',
      metadata: registry,
      // The ids come from the registry above; descriptions and examples stay where the schemas
      // put them (the global registry), which a registry of its own would otherwise hide.
      override: ({ zodSchema, jsonSchema }) => {
        const { id: _id, ...meta } = z.globalRegistry.get(zodSchema) ?? {};
        Object.assign(jsonSchema, meta);
      },
    }) as Json & {
      $defs?: Record<string, Json>;
    };
    for (const [id, def] of Object.entries($defs ?? {})) {
      const linked = relink(def) as Json;
      const known = components[id];
      if (known && JSON.stringify(known) !== JSON.stringify(linked)) {
        throw new Error(`Schema ${id} reads differently as a request and as a response: name only one of the two`);
      }
      components[id] = linked;
    }
    return relink(rest) as Json;
  };
  return { write, components };
}

function parameters(
  schema: (s: z.ZodMiniType, io: 'input' | 'output') => Json,
  where: 'path' | 'query',
  s: z.ZodMiniType | undefined,
): Json[] {
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

export async function buildOpenApi(): Promise<Json> {
  const { contracts, named } = await loadSchemaModules();
  const { write: schema, components } = schemaWriter(named);
  const paths: Record<string, Record<string, Json>> = {};
  const unknown = Object.keys(contracts).filter((name) => !httpRouteList.some((r) => r.name === name));
  if (unknown.length) throw new Error(`Contracts for routes the manifest lacks: ${unknown.join(', ')}`);
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
        route.shape !== 'envelope'
          ? data
          : {
              type: 'object',
              required: ['success', 'statusCode', 'message', 'data'],
              properties: {
                success: { const: true },
                statusCode: { const: status },
                message: { type: 'string', examples: [successMessage(status, route.success?.message)] },
                data,
              },
            };
      const content: Json =
        contract.streams === 'only' || contract.attachment ? {} : { 'application/json': { schema: body } };
      for (const [type, file] of Object.entries(contract.attachment ?? {}))
        content[type] = { schema: file ? schema(file, 'output') : { type: 'string' } };
      if (contract.streams && route.shape === 'openai') {
        content['text/event-stream'] = {
          schema: {
            type: 'string',
            description:
              'Server-Sent Events as OpenAI streams them: `data: {chunk}` lines (ChatCompletionChunk), the first with the role, ' +
              'one per delta, one with `finish_reason`; with `stream_options.include_usage` a last chunk with `usage` and empty ' +
              '`choices`; `citations` on the last chunk; a failure after the first byte is `data: {"error": {…}}`; always last `data: [DONE]`.',
            contentSchema: { $ref: `${COMPONENTS}ChatCompletionChunk` },
          },
          example:
            'data: {"id":"chatcmpl-…","object":"chat.completion.chunk","created":1795000000,"model":"library","choices":[{"index":0,"logprobs":null,"finish_reason":null,"delta":{"role":"assistant","content":""}}]}\n\n' +
            'data: {"id":"chatcmpl-…","object":"chat.completion.chunk","created":1795000000,"model":"library","choices":[{"index":0,"logprobs":null,"finish_reason":null,"delta":{"content":"One tree per loop [1]."}}]}\n\n' +
            'data: {"id":"chatcmpl-…","object":"chat.completion.chunk","created":1795000000,"model":"library","choices":[{"index":0,"logprobs":null,"finish_reason":"stop","delta":{}}],"citations":[{"index":1,"fileId":"…","fileName":"paper.pdf","page":2,"quote":"…","verified":true,"cited":true}]}\n\n' +
            'data: [DONE]\n\n',
        };
      } else if (contract.streams) {
        content['text/event-stream'] = {
          // contentSchema (JSON Schema's content vocabulary): the JSON data of the stream's events.
          schema: {
            type: 'string',
            description: SSE_DESCRIPTION,
            contentSchema: {
              description: 'The `data` of one event: start, sources, a delta, citations, usage or error',
              anyOf: [
                { $ref: `${COMPONENTS}StreamStartEvent` },
                { $ref: `${COMPONENTS}StreamDeltaEvent` },
                { type: 'array', items: { $ref: `${COMPONENTS}Source` } },
                {
                  type: 'object',
                  required: ['cited'],
                  properties: { cited: { type: 'array', items: { type: 'integer' } } },
                },
                { $ref: `${COMPONENTS}Usage` },
                { type: 'object', required: ['message'], properties: { message: { type: 'string' } } },
              ],
            },
          },
          example:
            'id: 1\nevent: start\ndata: {"chatId":"…","userMessageId":"…","userSequenceNumber":1,"messageId":"…"}\n\n' +
            'id: 2\ndata: {"content":"Hel"}\n\nid: 3\ndata: {"content":"lo"}\n\nid: 4\nevent: usage\ndata: {"promptTokens":9,"completionTokens":2,"totalTokens":11}\n\ndata: [DONE]\n\n',
        };
      }
      const headers = Object.fromEntries(
        ['x-request-id', ...(contract.attachment ? ['content-disposition'] : []), ...(contract.headers ?? [])].map(
          (h) => [h, { schema: { type: 'string' } }],
        ),
      );
      return { description: 'Success', headers, content };
    };
    const responses: Json = {};
    for (const [status, payload] of Object.entries(contract.responses))
      responses[status] = success(payload, Number(status));
    const signedIn = route.auth === 'user' || route.auth === 'admin';
    for (const status of [...new Set([...contract.errors, ...(signedIn ? [401] : [])])].sort()) {
      const e = errorExample(route, contract, status);
      const schemaName = { bare: 'BareError', envelope: 'ErrorEnvelope', openai: 'OpenAiError' }[route.shape];
      responses[status] = {
        description: errorDescriptions[status] ?? 'Error',
        content: {
          'application/json': {
            schema: { $ref: `${COMPONENTS}${schemaName}` },
            example:
              route.shape === 'openai'
                ? errorBody(
                    'openai',
                    status,
                    status === 404 ? OPENAI_MODEL_NOT_FOUND : e.message,
                    e.errors as never,
                    status === 404 ? 'model_not_found' : undefined,
                  )
                : route.shape === 'bare'
                  ? e
                  : { success: false, statusCode: status, ...e },
          },
        },
      };
    }
    const operation: Json = {
      operationId: route.name.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()),
      summary: contract.summary,
      ...(contract.description && { description: contract.description }),
      tags: [route.path.split('/')[1]],
      // A public route asks for no token at all.
      security:
        route.auth === 'public'
          ? []
          : route.auth === 'idp'
            ? [{ identityProviderToken: [] }]
            : [{ serviceToken: [] }, ...(route.keyScope ? [{ apiKey: [] }] : [])],
      ...(route.keyScope && { 'x-api-key-scope': route.keyScope }),
      ...(route.auth === 'admin' && { 'x-required-role': 'admin' }),
      parameters: [...parameters(schema, 'path', contract.params), ...parameters(schema, 'query', contract.query)],
      ...(contract.body && {
        requestBody: { required: true, content: { 'application/json': { schema: schema(contract.body, 'input') } } },
      }),
      responses,
    };
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation };
  }
  if (missing.length) throw new Error(`No contract (shared/<domain>/schemas.ts) for routes: ${missing.join(', ')}`);
  // Named schemas no route body refers to (the events of a stream) are components all the same.
  for (const [id, s] of Object.entries(named))
    if (!components[id]) schema(s, id.endsWith('Request') ? 'input' : 'output');
  return {
    openapi: '3.1.0',
    info: {
      title: 'Chat, Orders and PDF Ingestion Service',
      version: '1.0.0',
      description:
        'Generated from the route manifest and the zod schemas (npm run openapi). Chat, message, auth, upload and PDF routes answer in the envelope `{ success, statusCode, message, data }`; order and product routes answer bare objects and `{ message }` errors.',
    },
    servers: [
      { url: 'http://localhost:3000/api/v1', description: 'npm start' },
      {
        url: '{base_url}',
        variables: { base_url: { default: 'https://example.execute-api.us-east-1.amazonaws.com/api/v1' } },
      },
    ],
    components: {
      securitySchemes: {
        identityProviderToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: "The identity provider's ID token",
        },
        serviceToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'The service JWT from POST /auth',
        },
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API key from POST /me/api-keys (`cops_…`): accepted where the operation names its scope (`x-api-key-scope`)',
        },
      },
      schemas: {
        ...Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
        ErrorEnvelope: envelopeError,
        BareError: bareError,
        OpenAiError: openAiError,
        FieldErrors: {
          type: 'array',
          items: {
            type: 'object',
            required: ['path', 'message'],
            properties: {
              path: { type: 'string', examples: ['body.type'] },
              message: { type: 'string', examples: ['Invalid option: expected one of "text"|"file"'] },
              code: { type: 'string', examples: ['invalid_value'] },
            },
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
