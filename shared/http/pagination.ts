import { BadRequestError } from './errors.ts';

// Opaque list cursors: the DynamoDB LastEvaluatedKey as base64url JSON. A cursor that does not
// decode to a key of the expected attributes is a 400, never passed to DynamoDB.

export type Key = Record<string, string | number>;

export function encodeCursor(key: Record<string, unknown> | undefined): string | undefined {
  return key ? Buffer.from(JSON.stringify(key), 'utf8').toString('base64url') : undefined;
}

/**
 * Decodes a cursor for a query over `attributes` (the table and index keys). `fixed` holds the
 * key values the query itself pins (its partition key): a cursor from another partition, for
 * example another user's list, is refused rather than handed to DynamoDB.
 */
export function decodeCursor(
  cursor: string | undefined,
  attributes: readonly string[],
  fixed: Record<string, string> = {},
): Key | undefined {
  if (cursor === undefined) return undefined;
  const invalid = () => new BadRequestError('Invalid cursor', [{ path: 'query.cursor', message: 'Not a cursor this list issued' }]);
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!key || typeof key !== 'object' || Array.isArray(key)) throw invalid();
  const entries = Object.entries(key);
  const ok =
    entries.length === attributes.length &&
    entries.every(([k, v]) => attributes.includes(k) && (typeof v === 'string' || typeof v === 'number') && String(v).length <= 1024) &&
    Object.entries(fixed).every(([k, v]) => (key as Key)[k] === v);
  if (!ok) throw invalid();
  return key as Key;
}

/** The response header carrying the next page's cursor, when there is one. */
export function nextCursorHeader(lastKey: Record<string, unknown> | undefined): Record<string, string> {
  const cursor = encodeCursor(lastKey);
  return cursor ? { 'x-next-cursor': cursor } : {};
}
