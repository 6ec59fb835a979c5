import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { queryPage, queryPages, type Item, type Page } from './dynamo.ts';

// GSI1 holds a partition per user: USER#<userId> / <KIND>#<createdAt>#<id> for the user's chats,
// files, orders, collections and API keys, so each kind is listed newest first by one query of one shape. The id in the
// sort key keeps items of the same millisecond distinct and stably ordered.

export type UserListKind = 'CHAT' | 'FILE' | 'ORDER' | 'COLLECTION' | 'APIKEY';

const KEY_ATTRIBUTES = ['PK', 'SK', 'GSI1PK', 'GSI1SK'] as const;

const userPartition = (userId: string) => `USER#${userId}`;

/** The GSI1 attributes of an item listed in its owner's partition. */
export const userListKeys = (kind: UserListKind, item: { userId: string; createdAt: string; id: string }) => ({
  GSI1PK: userPartition(item.userId),
  GSI1SK: `${kind}#${item.createdAt}#${item.id}`,
});

/** One page of the user's items of a kind, newest first; a cursor of another user or kind is refused. */
export function userListPage<T>(
  db: DynamoDBDocumentClient,
  table: string,
  userId: string,
  kind: UserListKind,
  page: { limit: number; cursor?: string | undefined },
  fromItem: (item: Item) => T,
  /** Leaves out items in a state no list shows (a chat being deleted), or that the caller filters out. */
  filter?: string,
  filterValues: Item = {},
  filterNames?: Record<string, string>,
): Promise<Page<T>> {
  const pk = userPartition(userId);
  return queryPage(
    db,
    {
      TableName: table,
      IndexName: 'GSI1',
      KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :kind)',
      ...(filter && { FilterExpression: filter }),
      ...(filterNames && { ExpressionAttributeNames: filterNames }),
      ExpressionAttributeValues: { ':pk': pk, ':kind': `${kind}#`, ...filterValues },
      ScanIndexForward: false,
    },
    { ...page, keyAttributes: KEY_ATTRIBUTES, fixed: { GSI1PK: pk }, prefixes: { GSI1SK: `${kind}#` } },
    fromItem,
  );
}

/**
 * Every id of the user's items of a kind, those in states no list shows included (a chat being
 * deleted): what an erasure or a retention sweep works through. `before` keeps only items created
 * before that time (the sort key holds the creation time).
 */
export async function* userListIds(
  db: DynamoDBDocumentClient,
  table: string,
  userId: string,
  kind: UserListKind,
  before?: string,
): AsyncGenerator<string> {
  const pages = queryPages(db, {
    TableName: table,
    IndexName: 'GSI1',
    KeyConditionExpression: before
      ? 'GSI1PK = :pk AND GSI1SK BETWEEN :kind AND :before'
      : 'GSI1PK = :pk AND begins_with(GSI1SK, :kind)',
    ExpressionAttributeValues: {
      ':pk': userPartition(userId),
      ':kind': `${kind}#`,
      ...(before && { ':before': `${kind}#${before}` }),
    },
    ProjectionExpression: '#id',
    ExpressionAttributeNames: { '#id': 'id' },
  });
  for await (const items of pages) for (const item of items) yield item.id as string;
}
