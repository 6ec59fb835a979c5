import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { queryPages } from './dynamo.ts';

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
