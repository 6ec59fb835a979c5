import { GetCommand, PutCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { applyIf, queryPages } from './dynamo.ts';

// GSI3 holds every chat and file by creation time: CREATED#<shard> / <createdAt>#<KIND>#<id>,
// the item carrying its owner. The retention sweep reads each shard up to a cutoff: old items
// first, no Scan, and never more than what is due. A few shards (by id) spread the writes of
// busy seconds over partitions.

type CreatedKind = 'CHAT' | 'FILE';

export const CREATED_SHARDS = 4;

const shardOf = (id: string) => {
  let sum = 0;
  for (const c of id) sum = (sum + c.charCodeAt(0)) % CREATED_SHARDS;
  return sum;
};

/** The GSI3 attributes of a chat or file. */
export const createdKeys = (kind: CreatedKind, item: { createdAt: string; id: string }) => ({
  GSI3PK: `CREATED#${shardOf(item.id)}`,
  GSI3SK: `${item.createdAt}#${kind}#${item.id}`,
});

export interface CreatedItem {
  kind: CreatedKind;
  id: string;
  userId: string;
  createdAt: string;
}

/** Every chat and file created before `cutoff` (an ISO time), shard by shard, oldest first in each. */
export async function* createdBefore(
  db: DynamoDBDocumentClient,
  table: string,
  cutoff: string,
): AsyncGenerator<CreatedItem> {
  for (let shard = 0; shard < CREATED_SHARDS; shard++) {
    const pages = queryPages(db, {
      TableName: table,
      IndexName: 'GSI3',
      KeyConditionExpression: 'GSI3PK = :shard AND GSI3SK < :cutoff',
      ExpressionAttributeValues: { ':shard': `CREATED#${shard}`, ':cutoff': cutoff },
      ProjectionExpression: 'GSI3SK, userId',
    });
    for await (const items of pages) {
      for (const item of items) {
        const [createdAt, kind, id] = (item.GSI3SK as string).split('#') as [string, CreatedKind, string];
        yield { kind, id, userId: item.userId as string, createdAt };
      }
    }
  }
}

/** Where the backfill of items stored before the index is: `done`, or the scan's next page. */
const BACKFILL_KEY = { PK: 'SWEEP#CREATED-INDEX', SK: 'BACKFILL' };

/**
 * Chats and files stored before this index existed carry no GSI3 keys, so retention would never
 * find them. The sweep adds them once: a Scan (a maintenance pass, never a request path) for
 * chat and file items without the keys, a page at a time while there is time, its position kept
 * in a marker item so the next sweep goes on where this one stopped, and one GetItem a sweep once
 * it is done. Each item is given its keys by a conditional update (only if it still exists and has
 * none), so a concurrent delete or a second sweep changes nothing. How many items it keyed.
 */
export async function backfillCreatedIndex(
  db: DynamoDBDocumentClient,
  table: string,
  hasTime: () => boolean = () => true,
): Promise<number> {
  const marker = (await db.send(new GetCommand({ TableName: table, Key: BACKFILL_KEY, ConsistentRead: true }))).Item;
  if (marker?.done === true) return 0;
  let startKey = marker?.lastKey as Record<string, unknown> | undefined;
  let keyed = 0;
  do {
    if (!hasTime()) return keyed;
    const page = await db.send(
      new ScanCommand({
        TableName: table,
        ExclusiveStartKey: startKey,
        FilterExpression:
          'SK = :meta AND attribute_not_exists(GSI3PK) AND attribute_exists(createdAt) AND (begins_with(PK, :chat) OR begins_with(PK, :file))',
        ExpressionAttributeValues: { ':meta': 'META', ':chat': 'CHAT#', ':file': 'FILE#' },
        ProjectionExpression: 'PK, createdAt',
      }),
    );
    for (const item of page.Items ?? []) {
      const [kind, id] = (item.PK as string).split('#') as [CreatedKind, string];
      const keys = createdKeys(kind, { id, createdAt: item.createdAt as string });
      const applied = await applyIf(db, {
        TableName: table,
        Key: { PK: item.PK, SK: 'META' },
        UpdateExpression: 'SET GSI3PK = :pk, GSI3SK = :sk',
        ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(GSI3PK)',
        ExpressionAttributeValues: { ':pk': keys.GSI3PK, ':sk': keys.GSI3SK },
      });
      if (applied) keyed++;
    }
    startKey = page.LastEvaluatedKey;
    await db.send(
      new PutCommand({
        TableName: table,
        Item: { ...BACKFILL_KEY, ...(startKey ? { lastKey: startKey } : { done: true }) },
      }),
    );
  } while (startKey);
  return keyed;
}
