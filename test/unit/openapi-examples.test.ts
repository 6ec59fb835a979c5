import { z } from 'zod/mini';
import type { RouteContract } from '#shared/openapi/contract.ts';
import { buildOpenApi, loadContracts } from '#infra/openapi.ts';
import { errorShapeProblem } from '#test/security/routes-under-test.ts';
import { httpRouteList } from '#infra/routes.ts';

// The examples /docs shows are real: every request body, path and query parameter and every
// success payload of every route carries one (on itself, or on the items of a list), and each
// parses with the very schema the route validates with, so an example cannot drift from the
// contract; every error response shows one in the route's error shape.

const examplesOf = (s: z.ZodMiniType): unknown[] | undefined => {
  const own = z.globalRegistry.get(s)?.examples as unknown[] | undefined;
  if (own) return own;
  const def = s._zod.def as { type: string; element?: z.ZodMiniType };
  return def.type === 'array' && def.element ? examplesOf(def.element)?.map((e) => [e]) : undefined;
};

let contracts: Record<string, RouteContract>;
beforeAll(async () => {
  // The prompt's cap is read from the configuration as the functions read it.
  process.env.TABLE_NAME ??= 'openapi-examples';
  contracts = await loadContracts();
});

test('every route: its request body and success payloads have an example that the schema accepts', () => {
  const missing: string[] = [];
  const invalid: string[] = [];
  let checked = 0;
  for (const route of httpRouteList) {
    const contract = contracts[route.name]!;
    const schemas: [string, z.ZodMiniType][] = [
      ...(contract.body ? [['body', contract.body] as [string, z.ZodMiniType]] : []),
      ...Object.entries(contract.responses).flatMap(([status, s]) =>
        s ? [[status, s] as [string, z.ZodMiniType]] : [],
      ),
    ];
    for (const [what, schema] of schemas) {
      const examples = examplesOf(schema);
      if (!examples?.length) {
        missing.push(`${route.method} ${route.path} ${what}`);
        continue;
      }
      for (const e of examples) {
        checked++;
        const parsed = z.safeParse(schema, e);
        if (!parsed.success) invalid.push(`${route.method} ${route.path} ${what}: ${parsed.error.message}`);
      }
    }
  }
  expect(missing).toEqual([]);
  expect(invalid).toEqual([]);
  expect(checked).toBeGreaterThanOrEqual(httpRouteList.length);
});

test('every route: each path and query parameter has an example that its schema accepts', () => {
  const missing: string[] = [];
  const invalid: string[] = [];
  for (const route of httpRouteList) {
    const contract = contracts[route.name]!;
    for (const [where, s] of [
      ['path', contract.params],
      ['query', contract.query],
    ] as const) {
      const shape = (s?._zod.def as { shape?: Record<string, z.ZodMiniType> } | undefined)?.shape ?? {};
      for (const [name, param] of Object.entries(shape)) {
        const examples = examplesOf(param);
        if (!examples?.length) missing.push(`${route.method} ${route.path} ${where}.${name}`);
        for (const e of examples ?? [])
          if (!z.safeParse(param, e).success) invalid.push(`${route.method} ${route.path} ${where}.${name}: ${e}`);
      }
    }
  }
  expect(missing).toEqual([]);
  expect(invalid).toEqual([]);
});

test('every error response of the document has an example in its route body shape, with its own status', async () => {
  const doc = (await buildOpenApi()) as {
    paths: Record<
      string,
      Record<string, { responses: Record<string, { content?: Record<string, { example?: unknown }> }> }>
    >;
  };
  const problems: string[] = [];
  let checked = 0;
  for (const route of httpRouteList) {
    const { responses } = doc.paths[route.path]![route.method.toLowerCase()]!;
    for (const [status, response] of Object.entries(responses)) {
      if (Number(status) < 400) continue;
      checked++;
      const example = response.content?.['application/json']?.example;
      const problem = example === undefined ? 'no example' : errorShapeProblem(route.shape, Number(status), example);
      if (problem) problems.push(`${route.method} ${route.path} ${status}: ${problem}`);
    }
  }
  expect(problems).toEqual([]);
  expect(checked).toBeGreaterThanOrEqual(httpRouteList.length);
});
