import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type DeleteCommandInput,
  type DynamoDBDocumentClient,
  type PutCommandInput,
  type QueryCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { InvalidInputError, errorName } from './errors.ts';
import { mapLimit } from './map-limit.ts';

// What every repository needs from DynamoDB beyond single calls, in one place: pages and opaque
// cursors, conditional writes that answer "refused" instead of throwing, update expressions built
// from typed changes, and batch reads/writes that retry what DynamoDB left unprocessed.

const BATCH_WRITE_MAX = 25;
const BATCH_GET_MAX = 100;
const MAX_ATTEMPTS = 10;

export type Item = Record<string, unknown>;
export type Key = Record<string, string | number>;

/** One page of a list, and the key to continue from (absent on the last page). */
export interface Page<T> {
  items: T[];
  lastKey?: Key;
}

export const isConditionFailure = (err: unknown): boolean =>
  err instanceof ConditionalCheckFailedException || errorName(err) === 'ConditionalCheckFailedException';

const backoff = (attempt: number) =>
  new Promise((r) => setTimeout(r, Math.min(2_000, 25 * 2 ** attempt) * (0.5 + Math.random() / 2)));

// mapLimit lives in a dependency-free module (the Bedrock provider uses it without loading DynamoDB).
export { mapLimit };

/**
 * Every repository: a document client and the one table (docs/ARCHITECTURE.md, Access patterns),
 * given by the function that composes it.
 */
export abstract class Repository {
  constructor(
    protected readonly db: DynamoDBDocumentClient,
    protected readonly table: string,
  ) {}
}

// --- Cursors and pages -----------------------------------------------------------------------
// Opaque list cursors: the DynamoDB LastEvaluatedKey as base64url JSON. A cursor that does not
// decode to a key of the expected attributes is refused, never passed to DynamoDB.

/** A cursor this list did not issue (or could not have). */
export const invalidCursor = () =>
  new InvalidInputError('Invalid cursor', [{ path: 'query.cursor', message: 'Not a cursor this list issued' }]);

export function encodeCursor(key: Item | undefined): string | undefined {
  return key ? Buffer.from(JSON.stringify(key), 'utf8').toString('base64url') : undefined;
}

/**
 * Decodes a cursor for a query over `attributes` (the table and index keys). `fixed` holds the
 * key values the query itself pins (its partition key), and `prefixes` the sort-key prefixes it
 * reads: a cursor from another partition or list (another user's, another chat's) is refused.
 */
export function decodeCursor(
  cursor: string | undefined,
  attributes: readonly string[],
  fixed: Record<string, string> = {},
  prefixes: Record<string, string> = {},
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
    entries.every(
      ([k, v]) =>
        attributes.includes(k) && (typeof v === 'string' || typeof v === 'number') && String(v).length <= 1024,
    ) &&
    Object.entries(fixed).every(([k, v]) => (key as Key)[k] === v) &&
    Object.entries(prefixes).every(([k, p]) => String((key as Key)[k]).startsWith(p));
  if (!ok) throw invalidCursor();
  return key as Key;
}

/**
 * One page of a Query: at most `limit` items, and the key to continue from only when another
 * item follows. DynamoDB alone hands a LastEvaluatedKey whenever it stops at `Limit`, so a full
 * last page would lead the client to an empty one; asking for one item more tells the two apart.
 * A FilterExpression can leave a read short: reading goes on until the extra item is seen or the
 * partition ends. `keyAttributes` are the table's and the index's key attributes (the cursor is
 * built from the last returned item, as DynamoDB would); `cursor` is decoded against them and
 * the query's own partition and sort-key prefix.
 */
export async function queryPage<T>(
  db: DynamoDBDocumentClient,
  input: Omit<QueryCommandInput, 'Limit' | 'ExclusiveStartKey'>,
  page: {
    limit: number;
    cursor?: string | undefined;
    keyAttributes: readonly string[];
    fixed?: Record<string, string>;
    prefixes?: Record<string, string>;
  },
  fromItem: (item: Item) => T,
): Promise<Page<T>> {
  const { limit, keyAttributes } = page;
  const items: Item[] = [];
  let start: Item | undefined = decodeCursor(page.cursor, keyAttributes, page.fixed, page.prefixes);
  do {
    const out = await db.send(
      new QueryCommand({ ...input, Limit: limit + 1 - items.length, ExclusiveStartKey: start }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start && items.length <= limit);
  if (items.length <= limit) return { items: items.map(fromItem) };
  const kept = items.slice(0, limit);
  const last = kept[limit - 1]!;
  return {
    items: kept.map(fromItem),
    lastKey: Object.fromEntries(keyAttributes.map((k) => [k, last[k] as string | number])),
  };
}

/** Every page of a Query, as DynamoDB returns them (for work that goes through a whole partition). */
export async function* queryPages(
  db: DynamoDBDocumentClient,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey'>,
): AsyncGenerator<Item[]> {
  let start: Item | undefined;
  do {
    const out = await db.send(new QueryCommand({ ...input, ExclusiveStartKey: start }));
    yield out.Items ?? [];
    start = out.LastEvaluatedKey;
  } while (start);
}

/** Every item a Query finds. */
export async function queryAll<T>(
  db: DynamoDBDocumentClient,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey'>,
  fromItem: (item: Item) => T,
): Promise<T[]> {
  const out: T[] = [];
  for await (const items of queryPages(db, input)) out.push(...items.map(fromItem));
  return out;
}

// --- Conditional writes ----------------------------------------------------------------------

/** A conditional write's result, or undefined when DynamoDB refused it because the condition did not hold. */
async function unlessRefused<T>(write: Promise<T>): Promise<T | undefined> {
  try {
    return await write;
  } catch (err) {
    if (isConditionFailure(err)) return undefined;
    throw err;
  }
}

/** Puts an item that must not exist yet (its PK is free); false when it already does. */
export async function putIfAbsent(
  db: DynamoDBDocumentClient,
  input: Omit<PutCommandInput, 'ConditionExpression'>,
): Promise<boolean> {
  return (
    (await unlessRefused(db.send(new PutCommand({ ...input, ConditionExpression: 'attribute_not_exists(PK)' })))) !==
    undefined
  );
}

/** Puts an item under a new key (a fresh id): a key already taken is a bug, never overwritten. */
export async function putNew(
  db: DynamoDBDocumentClient,
  input: Omit<PutCommandInput, 'ConditionExpression'>,
): Promise<void> {
  if (!(await putIfAbsent(db, input)))
    throw new Error(`Key ${JSON.stringify({ PK: input.Item?.PK, SK: input.Item?.SK })} is taken`);
}

/** An update under a condition: the attributes it returns (all new ones unless asked otherwise), or undefined when refused. */
export async function updateIf(db: DynamoDBDocumentClient, input: UpdateCommandInput): Promise<Item | undefined> {
  return (await unlessRefused(db.send(new UpdateCommand({ ReturnValues: 'ALL_NEW', ...input }))))?.Attributes;
}

/** An update under a condition whose result is only whether it applied. */
export async function applyIf(
  db: DynamoDBDocumentClient,
  input: Omit<UpdateCommandInput, 'ReturnValues'>,
): Promise<boolean> {
  return (await unlessRefused(db.send(new UpdateCommand({ ...input, ReturnValues: 'NONE' })))) !== undefined;
}

/** A delete under a condition; false when the condition refused it. */
export async function deleteIf(db: DynamoDBDocumentClient, input: DeleteCommandInput): Promise<boolean> {
  return (await unlessRefused(db.send(new DeleteCommand(input)))) !== undefined;
}

/**
 * `SET #a = :a, …` and `REMOVE #b, …` from typed changes (an undefined value removes its
 * attribute), with every name and value as a placeholder. Merge it with the condition's own
 * names and values.
 */
export function updateExpression(set: Item, remove: readonly string[] = []) {
  const names: Record<string, string> = {};
  const values: Item = {};
  const sets: string[] = [];
  const removes: string[] = [];
  for (const [k, v] of Object.entries(set)) {
    names[`#${k}`] = k;
    if (v === undefined) removes.push(`#${k}`);
    else {
      values[`:${k}`] = v;
      sets.push(`#${k} = :${k}`);
    }
  }
  for (const k of remove) {
    names[`#${k}`] = k;
    removes.push(`#${k}`);
  }
  const UpdateExpression = [
    sets.length ? `SET ${sets.join(', ')}` : '',
    removes.length ? `REMOVE ${removes.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return {
    UpdateExpression,
    ExpressionAttributeNames: names,
    ...(Object.keys(values).length && { ExpressionAttributeValues: values }),
  };
}

// --- Batches ---------------------------------------------------------------------------------

type WriteRequest = { PutRequest: { Item: Item } } | { DeleteRequest: { Key: Item } };

/** BatchWriteItem in batches of 25 (`concurrency` at once), retrying unprocessed items with backoff. */
export async function batchWriteAll(
  db: DynamoDBDocumentClient,
  table: string,
  requests: WriteRequest[],
  concurrency = 1,
): Promise<void> {
  const batches: WriteRequest[][] = [];
  for (let i = 0; i < requests.length; i += BATCH_WRITE_MAX) batches.push(requests.slice(i, i + BATCH_WRITE_MAX));
  await mapLimit(batches, concurrency, async (batch) => {
    let pending = batch;
    for (let attempt = 0; pending.length; attempt++) {
      if (attempt >= MAX_ATTEMPTS) throw new Error(`BatchWriteItem left ${pending.length} items unprocessed`);
      if (attempt > 0) await backoff(attempt);
      const out = await db.send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
      pending = (out.UnprocessedItems?.[table] ?? []) as WriteRequest[];
    }
  });
}

/** BatchGetItem in batches of 100, retrying unprocessed keys; the items found (any order). */
export async function batchGetAll(
  db: DynamoDBDocumentClient,
  table: string,
  keys: Item[],
  options: { consistentRead?: boolean } = {},
): Promise<Item[]> {
  const found: Item[] = [];
  for (let i = 0; i < keys.length; i += BATCH_GET_MAX) {
    let pending = keys.slice(i, i + BATCH_GET_MAX);
    for (let attempt = 0; pending.length; attempt++) {
      if (attempt >= MAX_ATTEMPTS) throw new Error(`BatchGetItem left ${pending.length} keys unprocessed`);
      if (attempt > 0) await backoff(attempt);
      const out = await db.send(
        new BatchGetCommand({
          RequestItems: { [table]: { Keys: pending, ...(options.consistentRead && { ConsistentRead: true }) } },
        }),
      );
      found.push(...(out.Responses?.[table] ?? []));
      pending = (out.UnprocessedKeys?.[table]?.Keys ?? []) as Item[];
    }
  }
  return found;
}

/** Deletes every item a Query of the table finds, but those `keep` (given the key only) spares; how many. */
export async function deleteAll(
  db: DynamoDBDocumentClient,
  input: Omit<QueryCommandInput, 'ExclusiveStartKey' | 'ProjectionExpression'> & { TableName: string },
  options: { keep?: (key: Item) => boolean; concurrency?: number } = {},
): Promise<number> {
  let deleted = 0;
  for await (const items of queryPages(db, { ...input, ProjectionExpression: 'PK, SK' })) {
    const keys = items.filter((k) => !options.keep?.(k)).map((k) => ({ PK: k.PK, SK: k.SK }));
    await batchWriteAll(
      db,
      input.TableName,
      keys.map((Key) => ({ DeleteRequest: { Key } })),
      options.concurrency,
    );
    deleted += keys.length;
  }
  return deleted;
}
