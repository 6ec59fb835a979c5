import { invalid } from './limits.ts';
import type { Metadata, VectorIndex } from './vector-slots.ts';

// A query's filter (checked, then matched as documented) and its distance to a stored vector.

type Primitive = string | number | boolean;
const isPrimitive = (v: unknown): v is Primitive =>
  typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/** Checks a filter's syntax and that it names only filterable keys; throws ValidationException. */
export function checkFilter(filter: unknown, nonFilterable: string[]): void {
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter))
    throw invalid('Invalid filter: an object');
  const entries = Object.entries(filter);
  if (!entries.length) throw invalid('Invalid filter: empty object');
  for (const [key, cond] of entries) {
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(cond) || !cond.length)
        throw invalid(`Invalid filter: ${key} takes a non-empty array of filters`);
      for (const f of cond) checkFilter(f, nonFilterable);
      continue;
    }
    if (key.startsWith('$')) throw invalid(`Invalid filter: unknown operator ${key}`);
    if (nonFilterable.includes(key)) throw invalid(`Invalid filter: metadata key '${key}' is not filterable`);
    if (isPrimitive(cond)) continue;
    if (typeof cond !== 'object' || cond === null || Array.isArray(cond)) throw invalid(`Invalid filter on '${key}'`);
    const ops = Object.entries(cond);
    if (ops.length !== 1) throw invalid(`Invalid filter on '${key}': one operator per key`);
    const [op, operand] = ops[0]!;
    switch (op) {
      case '$eq':
      case '$ne':
        if (!isPrimitive(operand)) throw invalid(`Invalid filter: ${op} takes a string, number or boolean`);
        break;
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte':
        if (typeof operand !== 'number' || !Number.isFinite(operand))
          throw invalid(`Invalid filter: ${op} takes a number`);
        break;
      case '$in':
      case '$nin':
        if (!Array.isArray(operand) || !operand.length || !operand.every(isPrimitive))
          throw invalid(`Invalid filter: ${op} takes a non-empty array of primitives`);
        break;
      case '$exists':
        if (typeof operand !== 'boolean') throw invalid('Invalid filter: $exists takes a boolean');
        break;
      default:
        throw invalid(`Invalid filter: unknown operator ${op}`);
    }
  }
}

/** Whether metadata matches a (checked) filter. */
export function matchesFilter(metadata: Metadata | undefined, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([key, cond]) => {
    if (key === '$and') return (cond as Record<string, unknown>[]).every((f) => matchesFilter(metadata, f));
    if (key === '$or') return (cond as Record<string, unknown>[]).some((f) => matchesFilter(metadata, f));
    const value = metadata?.[key];
    const values: unknown[] = Array.isArray(value) ? value : value === undefined ? [] : [value];
    if (isPrimitive(cond)) return values.includes(cond);
    const [op, operand] = Object.entries(cond as object)[0]!;
    switch (op) {
      case '$eq':
        return values.includes(operand);
      case '$ne':
        return value !== undefined && !values.includes(operand);
      case '$gt':
        return typeof value === 'number' && value > (operand as number);
      case '$gte':
        return typeof value === 'number' && value >= (operand as number);
      case '$lt':
        return typeof value === 'number' && value < (operand as number);
      case '$lte':
        return typeof value === 'number' && value <= (operand as number);
      case '$in':
        return values.some((v) => (operand as unknown[]).includes(v));
      case '$nin':
        return value !== undefined && !values.some((v) => (operand as unknown[]).includes(v));
      case '$exists':
        return (value !== undefined) === operand;
      default:
        return false;
    }
  });
}

/** The distance from a query to the vector at `offset` in `block`; `norms`, the query's and the vector's (cosine). */
export function distance(
  metric: VectorIndex['distanceMetric'],
  query: Float32Array,
  block: Float32Array,
  offset: number,
  queryNorm: number,
  norm: number,
): number {
  if (metric === 'euclidean') {
    let sq = 0;
    for (let i = 0; i < query.length; i++) {
      const d = query[i]! - block[offset + i]!;
      sq += d * d;
    }
    return Math.sqrt(sq);
  }
  let dot = 0;
  for (let i = 0; i < query.length; i++) dot += query[i]! * block[offset + i]!;
  const norms = queryNorm * norm;
  return norms ? 1 - dot / norms : 1;
}
