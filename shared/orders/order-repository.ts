import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { putNew, queryPage, Repository, updateIf, type Item, type Page } from '../dynamo.ts';
import { userListKeys, userListPage } from '../user-index.ts';
import type { OrderStatus } from './order-status.ts';
import type { Order } from './schemas.ts';

// Orders (docs/ARCHITECTURE.md, Access patterns). One item per order: ORDER#<id> / META, with two
// list keys:
//   GSI1 USER#<userId> / ORDER#<createdAt>#<id>  — a user's orders, newest first (the partition
//        also holds the user's chats and files, hence the ORDER# prefix condition);
//   GSI2 ORDERS / <createdAt>#<id>               — every order, newest first (the admin view).
// The id in both sort keys keeps orders of the same millisecond distinct and stably ordered.
//
// Access patterns: get by id; a user's orders; all orders; create; status change conditional on
// the status read before it (the race guard).

const ALL_LIST_KEYS = ['PK', 'SK', 'GSI2PK', 'GSI2SK'] as const;
const ALL_ORDERS = 'ORDERS';

const key = (id: string) => ({ PK: `ORDER#${id}`, SK: 'META' });
const toItem = (o: Order): Item => ({
  ...key(o.id),
  ...userListKeys('ORDER', o),
  GSI2PK: ALL_ORDERS,
  GSI2SK: `${o.createdAt}#${o.id}`,
  ...o,
});

function fromItem(item: Item): Order {
  const { id, userId, status, createdAt, updatedAt, providerPaymentIntentId, items, totalCents, currency } =
    item as Order;
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

export type { Page };

type StatusChange = { outcome: 'changed'; order: Order } | { outcome: 'stale' };

export class OrderRepository extends Repository {
  async create(order: Order): Promise<void> {
    await putNew(this.db, { TableName: this.table, Item: toItem(order) });
  }

  async get(id: string, consistent = false): Promise<Order | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: key(id), ConsistentRead: consistent }));
    return out.Item ? fromItem(out.Item) : undefined;
  }

  /**
   * Sets the status only if it is still `expected`: of two racing updates from the same status,
   * one wins and the other comes back `stale`.
   */
  async changeStatus(id: string, expected: OrderStatus, to: OrderStatus, now: string): Promise<StatusChange> {
    const changed = await updateIf(this.db, {
      TableName: this.table,
      Key: key(id),
      ConditionExpression: 'attribute_exists(PK) AND #status = :expected',
      UpdateExpression: 'SET #status = :to, updatedAt = :now',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':expected': expected, ':to': to, ':now': now },
    });
    return changed ? { outcome: 'changed', order: fromItem(changed) } : { outcome: 'stale' };
  }

  /** One page of a user's orders, newest first. */
  listForUser(userId: string, limit: number, cursor: string | undefined): Promise<Page<Order>> {
    return userListPage(this.db, this.table, userId, 'ORDER', { limit, cursor }, fromItem);
  }

  /** One page of every order, newest first. */
  listAll(limit: number, cursor: string | undefined): Promise<Page<Order>> {
    return queryPage(
      this.db,
      {
        TableName: this.table,
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk',
        ExpressionAttributeValues: { ':pk': ALL_ORDERS },
        ScanIndexForward: false,
      },
      { limit, cursor, keyAttributes: ALL_LIST_KEYS, fixed: { GSI2PK: ALL_ORDERS } },
      fromItem,
    );
  }
}
