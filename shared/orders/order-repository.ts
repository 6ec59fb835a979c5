import { GetCommand, PutCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { decodeCursor, queryPage } from '../http/pagination.ts';
import type { OrderStatus } from './order-status.ts';
import type { Order } from './schemas.ts';
import { isConditionFailure } from '../dynamo.ts';

// Orders (DESIGN §5). One item per order: ORDER#<id> / META, with two list keys:
//   GSI1 USER#<userId> / ORDER#<createdAt>#<id>  — a user's orders, newest first (the partition
//        also holds the user's chats and files, hence the ORDER# prefix condition);
//   GSI2 ORDERS / <createdAt>#<id>               — every order, newest first (the admin view).
// The id in both sort keys keeps orders of the same millisecond distinct and stably ordered.
//
// Access patterns: get by id; a user's orders; all orders; create; status change conditional on
// the status read before it (the race guard).

const USER_LIST_KEYS = ['PK', 'SK', 'GSI1PK', 'GSI1SK'] as const;
const ALL_LIST_KEYS = ['PK', 'SK', 'GSI2PK', 'GSI2SK'] as const;
const ALL_ORDERS = 'ORDERS';

const key = (id: string) => ({ PK: `ORDER#${id}`, SK: 'META' });
const userPartition = (userId: string) => `USER#${userId}`;
const listKeys = (o: Pick<Order, 'id' | 'userId' | 'createdAt'>) => ({
  GSI1PK: userPartition(o.userId),
  GSI1SK: `ORDER#${o.createdAt}#${o.id}`,
  GSI2PK: ALL_ORDERS,
  GSI2SK: `${o.createdAt}#${o.id}`,
});

function toOrder(item: Record<string, unknown>): Order {
  const { id, userId, status, createdAt, updatedAt, providerPaymentIntentId, items, totalCents, currency } = item as Order;
  return {
    id,
    userId,
    status,
    createdAt,
    updatedAt,
    providerPaymentIntentId: providerPaymentIntentId ?? null,
    items: items ?? [],
    totalCents: totalCents ?? 0,
    currency: currency ?? null,
  };
}


export interface Page<T> {
  items: T[];
  lastKey: Record<string, unknown> | undefined;
}

export type StatusChange = { outcome: 'changed'; order: Order } | { outcome: 'stale' };

export class OrderRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async create(order: Order): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.table,
        Item: { ...key(order.id), ...listKeys(order), ...order },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
  }

  async get(id: string, consistent = false): Promise<Order | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: key(id), ConsistentRead: consistent }));
    return out.Item ? toOrder(out.Item) : undefined;
  }

  /**
   * Sets the status only if it is still `expected`: of two racing updates from the same status,
   * one wins and the other comes back `stale`.
   */
  async changeStatus(id: string, expected: OrderStatus, to: OrderStatus, now: string): Promise<StatusChange> {
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key(id),
          ConditionExpression: 'attribute_exists(PK) AND #status = :expected',
          UpdateExpression: 'SET #status = :to, updatedAt = :now',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':expected': expected, ':to': to, ':now': now },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { outcome: 'changed', order: toOrder(out.Attributes!) };
    } catch (err) {
      if (isConditionFailure(err)) return { outcome: 'stale' };
      throw err;
    }
  }

  /** One page of a user's orders, newest first. */
  async listForUser(userId: string, limit: number, cursor: string | undefined): Promise<Page<Order>> {
    const pk = userPartition(userId);
    const start = decodeCursor(cursor, USER_LIST_KEYS, { GSI1PK: pk });
    const out = await queryPage(
      this.db,
      {
        TableName: this.table,
        IndexName: 'GSI1',
        KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :prefix)',
        ExpressionAttributeValues: { ':pk': pk, ':prefix': 'ORDER#' },
        ScanIndexForward: false,
        ...(start && { ExclusiveStartKey: start }),
      },
      limit,
      USER_LIST_KEYS,
    );
    return { items: out.items.map(toOrder), lastKey: out.lastKey };
  }

  /** One page of every order, newest first. */
  async listAll(limit: number, cursor: string | undefined): Promise<Page<Order>> {
    const start = decodeCursor(cursor, ALL_LIST_KEYS, { GSI2PK: ALL_ORDERS });
    const out = await queryPage(
      this.db,
      {
        TableName: this.table,
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk',
        ExpressionAttributeValues: { ':pk': ALL_ORDERS },
        ScanIndexForward: false,
        ...(start && { ExclusiveStartKey: start }),
      },
      limit,
      ALL_LIST_KEYS,
    );
    return { items: out.items.map(toOrder), lastKey: out.lastKey };
  }
}
