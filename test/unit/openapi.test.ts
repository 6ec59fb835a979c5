import { readFile } from 'node:fs/promises';
import { buildOpenApi, loadContracts, OPENAPI_PATH } from '#infra/openapi.ts';
import { httpRouteList } from '#infra/routes.ts';

// The OpenAPI document is generated from the same zod schemas the handlers validate with.

test('docs/openapi.json is current (run `npm run openapi` after changing a schema or route)', async () => {
  const generated = await buildOpenApi();
  const committed = JSON.parse(await readFile(OPENAPI_PATH, 'utf8'));
  expect(committed).toEqual(generated);
});

test('every manifest route is documented with its method and security', async () => {
  const doc = (await buildOpenApi()) as {
    paths: Record<
      string,
      Record<string, { security: unknown[]; responses: Record<string, unknown>; 'x-api-key-scope'?: string }>
    >;
  };
  for (const route of httpRouteList) {
    const op = doc.paths[route.path]?.[route.method.toLowerCase()];
    expect(op).toBeDefined();
    if (route.auth === 'public') {
      // Readable without a token: no security requirement, and no 401 to document.
      expect([op!.security, op!.responses['401']]).toEqual([[], undefined]);
      continue;
    }
    // A route that takes API keys (a `keyScope`) names both; the operation says which scope.
    expect(op!.security).toEqual(
      route.auth === 'idp'
        ? [{ identityProviderToken: [] }]
        : [{ serviceToken: [] }, ...('keyScope' in route ? [{ apiKey: [] }] : [])],
    );
    expect(op!['x-api-key-scope']).toBe('keyScope' in route ? route.keyScope : undefined);
    if (route.auth !== 'idp') expect(op!.responses['401']).toBeDefined();
  }
});

test("a route's declared success is the one success status of its contract", async () => {
  const contracts = await loadContracts();
  const disagree = httpRouteList.flatMap((route) => {
    const statuses = Object.keys(contracts[route.name]?.responses ?? {}).map(Number);
    const declared = route.success?.status;
    // Without a declaration the handler sets the status itself: the contract's must be 200 or several.
    const agrees =
      declared === undefined ? statuses.length > 1 || statuses[0] === 200 : `${statuses}` === `${declared}`;
    return agrees ? [] : [{ route: route.name, declared, contract: statuses }];
  });
  expect(disagree).toEqual([]);
});
