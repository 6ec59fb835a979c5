import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { putNew, queryPage, Repository, updateIf, type Item, type Page } from '../dynamo.ts';
import { userListKeys, userListPage } from '../user-index.ts';
import type { OrderStatus } from './order-status.ts';
import type { PaymentStatus } from './payment-status.ts';
import type { Order } from './schemas.ts';

// Orders (docs/ARCHITECTURE.md, Access patterns). One item per order: ORDER#<id> / META, with two
// list keys:
//   GSI1 USER#<userId> / ORDER#<createdAt>#<id>  — a user's orders, newest first (the partition
//        also holds the user's chats and files, hence the ORDER# prefix condition);
//   GSI2 ORDERS / <createdAt>#<id>               — every order, newest first (the admin view).
// The id in both sort keys keeps orders of the same millisecond distinct and stably ordered.
//
// Access patterns: get by id; a user's orders; all orders (either filtered by payment status);
// create; status change conditional on the status read before it (the race guard); a payment
// event applied on condition that it was not applied before and that the statuses are still the
// ones read (the event ids applied are kept on the order, `paymentEventIds`).
//
// A provider payment's order: PAYMENT_INTENT#<paymentId> / META → { orderId }, written before the
// order itself (a link without an order is ignored; an order is never without its link). The
// prefix is what the items were first written under, kept for them.

const ALL_LIST_KEYS = ['PK', 'SK', 'GSI2PK', 'GSI2SK'] as const;
const ALL_ORDERS = 'ORDERS';

const key = (id: string) => ({ PK: `ORDER#${id}`, SK: 'META' });
const paymentKey = (paymentId: string) => ({ PK: `PAYMENT_INTENT#${paymentId}`, SK: 'META' });
const toItem = (o: Order): Item => ({
  ...key(o.id),
  ...userListKeys('ORDER', o),
  GSI2PK: ALL_ORDERS,
  GSI2SK: `${o.createdAt}#${o.id}`,
  ...o,
});

function fromItem(item: Item): Order {
  const { id, userId, status, createdAt, updatedAt, providerPaymentIntentId, payment, items, totalCents, currency } =
    item as Order;
  return {
    id,
    userId,
    status,
    createdAt,
    updatedAt,
    providerPaymentIntentId: providerPaymentIntentId ?? null,
    payment: payment ?? null,
    items: items ?? [],
    totalCents: totalCents ?? 0,
    currency: currency ?? null,
  };
}

export type { Page };

type StatusChange = { outcome: 'changed'; order: Order } | { outcome: 'stale' };

/** A payment event's change of an order, from the statuses read to the ones it asks for. */
export interface PaymentChange {
  eventId: string;
  from: { status: OrderStatus; payment: PaymentStatus };
  to: { status: OrderStatus; payment: PaymentStatus };
  now: string;
}

const paymentFilter = (paymentStatus: PaymentStatus | undefined) =>
  paymentStatus
    ? {
        filter: 'payment.#paymentStatus = :paymentStatus',
        names: { '#paymentStatus': 'status' },
        values: { ':paymentStatus': paymentStatus },
      }
    : undefined;

export class OrderRepository extends Repository {
  async create(order: Order): Promise<void> {
    await putNew(this.db, { TableName: this.table, Item: toItem(order) });
  }

  /** Records which order a provider payment pays (before the order is written). */
  async linkPayment(paymentId: string, orderId: string): Promise<void> {
    await this.db.send(new PutCommand({ TableName: this.table, Item: { ...paymentKey(paymentId), orderId } }));
  }

  /** The id of the order a provider payment was made for, if it is one of ours. */
  async orderIdOfPayment(paymentId: string): Promise<string | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: paymentKey(paymentId) }));
    return typeof out.Item?.orderId === 'string' ? out.Item.orderId : undefined;
  }

  /**
   * Applies a payment event: only if this event was not applied yet and the order and payment
   * statuses are still those read; the event id is kept with the change (one write), so a
   * replayed event finds itself applied. `stale` when either condition failed.
   */
  async applyPayment(id: string, change: PaymentChange): Promise<StatusChange> {
    const changed = await updateIf(this.db, {
      TableName: this.table,
      Key: key(id),
      ConditionExpression:
        'attribute_exists(PK) AND #status = :fromStatus AND payment.#paymentStatus = :fromPayment AND NOT contains(paymentEventIds, :eventId)',
      UpdateExpression:
        'SET #status = :toStatus, payment.#paymentStatus = :toPayment, updatedAt = :now ADD paymentEventIds :eventIds',
      ExpressionAttributeNames: { '#status': 'status', '#paymentStatus': 'status' },
      ExpressionAttributeValues: {
        ':fromStatus': change.from.status,
        ':fromPayment': change.from.payment,
        ':toStatus': change.to.status,
        ':toPayment': change.to.payment,
        ':eventId': change.eventId,
        ':eventIds': new Set([change.eventId]),
        ':now': change.now,
      },
    });
    return changed ? { outcome: 'changed', order: fromItem(changed) } : { outcome: 'stale' };
  }

  /** Whether a payment event was applied to the order. */
  async hasApplied(id: string, eventId: string): Promise<boolean> {
    const out = await this.db.send(
      new GetCommand({
        TableName: this.table,
        Key: key(id),
        ProjectionExpression: 'paymentEventIds',
        ConsistentRead: true,
      }),
    );
    return (out.Item?.paymentEventIds as Set<string> | undefined)?.has(eventId) ?? false;
  }

  /**
   * Keeps an erased user's order for accounting under a tombstone: the owner becomes an opaque id
   * and the order leaves the user's list (its GSI1 keys go); the admin list still shows it.
   */
  async tombstone(id: string, tombstoneUserId: string): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: key(id),
        UpdateExpression: 'SET userId = :tombstone REMOVE GSI1PK, GSI1SK',
        ExpressionAttributeValues: { ':tombstone': tombstoneUserId },
      }),
    );
  }

  async get(id: string, consistent = false): Promise<Order | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: key(id), ConsistentRead: consistent }));
    return out.Item ? fromItem(out.Item) : undefined;
  }

  /**
   * Sets the status only if it is still `expected`: of two racing updates from the same status,
   * one wins and the other comes back `stale`.
   */
  async changeStatus(
    id: string,
    expected: OrderStatus,
    to: OrderStatus,
    now: string,
    /** The payment status the move was decided on, when the order has a payment. */
    expectedPayment?: PaymentStatus,
  ): Promise<StatusChange> {
    const changed = await updateIf(this.db, {
      TableName: this.table,
      Key: key(id),
      ConditionExpression: `attribute_exists(PK) AND #status = :expected${expectedPayment ? ' AND payment.#paymentStatus = :expectedPayment' : ''}`,
      UpdateExpression: 'SET #status = :to, updatedAt = :now',
      ExpressionAttributeNames: { '#status': 'status', ...(expectedPayment && { '#paymentStatus': 'status' }) },
      ExpressionAttributeValues: {
        ':expected': expected,
        ':to': to,
        ':now': now,
        ...(expectedPayment && { ':expectedPayment': expectedPayment }),
      },
    });
    return changed ? { outcome: 'changed', order: fromItem(changed) } : { outcome: 'stale' };
  }

  /** One page of a user's orders, newest first. */
  listForUser(
    userId: string,
    limit: number,
    cursor: string | undefined,
    paymentStatus?: PaymentStatus,
  ): Promise<Page<Order>> {
    const only = paymentFilter(paymentStatus);
    return userListPage(
      this.db,
      this.table,
      userId,
      'ORDER',
      { limit, cursor },
      fromItem,
      only?.filter,
      only?.values,
      only?.names,
    );
  }

  /** One page of every order, newest first. */
  listAll(limit: number, cursor: string | undefined, paymentStatus?: PaymentStatus): Promise<Page<Order>> {
    const only = paymentFilter(paymentStatus);
    return queryPage(
      this.db,
      {
        TableName: this.table,
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk',
        ...(only && { FilterExpression: only.filter, ExpressionAttributeNames: only.names }),
        ExpressionAttributeValues: { ':pk': ALL_ORDERS, ...only?.values },
        ScanIndexForward: false,
      },
      { limit, cursor, keyAttributes: ALL_LIST_KEYS, fixed: { GSI2PK: ALL_ORDERS } },
      fromItem,
    );
  }
}
