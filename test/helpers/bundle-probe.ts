import type { ManifestFunction } from '#infra/routes.ts';

/** A probe bundled the way a service function is, from test/infra/fixtures/<name>.ts (granted nothing). */
export function probeFunction(
  name: string,
  kind: ManifestFunction['kind'],
  limits: Pick<ManifestFunction, 'timeoutSeconds' | 'memoryMb'>,
): ManifestFunction {
  return { name, entry: `test/infra/fixtures/${name}.ts`, kind, ...limits, access: {} };
}
