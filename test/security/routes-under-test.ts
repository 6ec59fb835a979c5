import { z } from 'zod/mini';
import { httpRouteList, type HttpRoute } from '#infra/routes.ts';
import { loadContracts } from '#infra/openapi.ts';
import type { RouteContract } from '#shared/openapi/contract.ts';

// The routes of the manifest with their contracts (the zod schemas the handlers validate with),
// so the hostile-input suites cover every route, new ones included, without a list of their own.

export type JsonSchema = Record<string, any>;

export interface RouteUnderTest extends HttpRoute {
  name: string;
  contract: RouteContract;
  /** Path parameter names, in order. */
  params: string[];
  /** JSON Schema of the body (input side), when the route takes one. */
  bodySchema?: JsonSchema;
}

export async function routesUnderTest(): Promise<RouteUnderTest[]> {
  const contracts = await loadContracts();
  return httpRouteList.map((r) => {
    const contract = contracts[r.name as keyof typeof contracts];
    if (!contract) throw new Error(`route ${r.name} has no contract`);
    return {
      ...r,
      contract,
      params: [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
      ...(contract.body && { bodySchema: toJsonSchema(contract.body) }),
    };
  });
}

export function toJsonSchema(schema: z.ZodMiniType): JsonSchema {
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
}

/** The route's path with its parameters filled in (encoded unless told otherwise). */
export function fillPath(
  path: string,
  values: Record<string, string>,
  encode: (s: string) => string = encodeURIComponent,
): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => encode(values[name] ?? ''));
}

/** The JSON Schema of a property, unwrapped from `anyOf [x, null]` and `allOf [x]`. */
export function unwrap(s: JsonSchema | undefined): JsonSchema {
  if (!s) return {};
  if (Array.isArray(s.allOf) && s.allOf.length === 1) return unwrap({ ...s, ...s.allOf[0], allOf: undefined });
  const options = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  if (options) return unwrap(options.find((o) => o.type !== 'null') ?? options[0]);
  return s;
}

export const isCuidSchema = (s: JsonSchema) => typeof s.pattern === 'string' && s.pattern.includes('[a-z0-9]{23}');
export const isUrlSchema = (s: JsonSchema) => s.format === 'uri' || s.format === 'url';

/** OpenAI's error body: `{ error: { message, type, param, code } }` and nothing else. */
function openAiErrorProblem(b: Record<string, unknown>): string | undefined {
  const extra = Object.keys(b).filter((k) => k !== 'error');
  if (extra.length) return `unexpected keys ${extra.join(', ')}`;
  const e = b.error as Record<string, unknown> | undefined;
  if (!e || typeof e !== 'object') return 'no error object';
  if (typeof e.message !== 'string' || e.message === '') return 'no error.message';
  if (typeof e.type !== 'string') return 'no error.type';
  if (!('param' in e) || !('code' in e)) return 'error.param or error.code missing';
  const unknown = Object.keys(e).filter((k) => !['message', 'type', 'param', 'code'].includes(k));
  return unknown.length ? `unexpected error keys ${unknown.join(', ')}` : undefined;
}

/**
 * Why an error answer is not in the route's body shape, or undefined when it is. Envelope:
 * `{ success: false, statusCode: <HTTP status>, message, errors? }`; bare: `{ message, errors? }`;
 * openai: OpenAI's `{ error: { message, type, param, code } }`.
 */
export function errorShapeProblem(
  shape: HttpRoute['shape'] | 'either',
  status: number,
  body: unknown,
): string | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    return `body is not a JSON object: ${String(body).slice(0, 120)}`;
  const b = body as Record<string, unknown>;
  if (shape === 'openai') return openAiErrorProblem(b);
  if (typeof b.message !== 'string' || b.message === '') return 'no message';
  if (b.errors !== undefined && !Array.isArray(b.errors)) return 'errors is not an array';
  const envelope = () => {
    if (b.success !== false) return 'success is not false';
    if (b.statusCode !== status) return `statusCode ${String(b.statusCode)} differs from the HTTP status ${status}`;
    const extra = Object.keys(b).filter((k) => !['success', 'statusCode', 'message', 'errors'].includes(k));
    return extra.length ? `unexpected keys ${extra.join(', ')}` : undefined;
  };
  const bare = () => {
    const extra = Object.keys(b).filter((k) => !['message', 'errors'].includes(k));
    return extra.length ? `unexpected keys ${extra.join(', ')}` : undefined;
  };
  if (shape === 'envelope') return envelope();
  if (shape === 'bare') return bare();
  return envelope() && bare() ? `neither shape: ${envelope()}` : undefined;
}
