import { QueryCommand, type DynamoDBDocumentClient, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { InvalidInputError } from '../errors.ts';

// Opaque list cursors: the DynamoDB LastEvaluatedKey as base64url JSON. A cursor that does not
// decode to a key of the expected attributes is a 400, never passed to DynamoDB.

export type Key = Record<string, string | number>;

/** A cursor this list did not issue (or could not have). */
export const invalidCursor = () => new InvalidInputError('Invalid cursor', [{ path: 'query.cursor', message: 'Not a cursor this list issued' }]);

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
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  if (!key || typeof key !== 'object' || Array.isArray(key)) throw invalidCursor();
  const entries = Object.entries(key);
  const ok =
    entries.length === attributes.length &&
    entries.every(([k, v]) => attributes.includes(k) && (typeof v === 'string' || typeof v === 'number') && String(v).length <= 1024) &&
    Object.entries(fixed).every(([k, v]) => (key as Key)[k] === v);
  if (!ok) throw invalidCursor();
  return key as Key;
}

/** The response header carrying the next page's cursor, when there is one. */
export function nextCursorHeader(lastKey: Record<string, unknown> | undefined): Record<string, string> {
  const cursor = encodeCursor(lastKey);
  return cursor ? { 'x-next-cursor': cursor } : {};
}

/**
 * One page of a DynamoDB Query: at most `limit` items, and the key to continue from only when
 * another item follows. DynamoDB alone hands a LastEvaluatedKey whenever it stops at `Limit`, so a
 * full last page would lead the client to an empty one; asking for one item more tells the two
 * apart. A FilterExpression can leave a read short: reading goes on until the extra item is seen
 * or the partition ends. `keyAttributes` are the table's and the index's key attributes (the
 * cursor is built from the last returned item, as DynamoDB would).
 */
export async function queryPage(
  db: DynamoDBDocumentClient,
  input: Omit<QueryCommandInput, 'Limit'>,
  limit: number,
  keyAttributes: readonly string[],
): Promise<{ items: Record<string, unknown>[]; lastKey?: Key }> {
  const items: Record<string, unknown>[] = [];
  let start = input.ExclusiveStartKey;
  do {
    const out = await db.send(
      new QueryCommand({ ...input, Limit: limit + 1 - items.length, ExclusiveStartKey: start }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start && items.length <= limit);
  if (items.length <= limit) return { items };
  const page = items.slice(0, limit);
  const last = page[limit - 1]!;
  return { items: page, lastKey: Object.fromEntries(keyAttributes.map((k) => [k, last[k] as string | number])) };
}
