import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import {
  applyIf,
  deleteAll,
  putIfAbsent,
  putNew,
  queryAll,
  queryPage,
  Repository,
  type Item,
  type Page,
} from '../dynamo.ts';
import { NotFoundError } from '../errors.ts';

// Webhook endpoints and their deliveries (docs/ARCHITECTURE.md, Access patterns; docs/DECISIONS.md
// "Webhooks"):
//   WEBHOOKS#<userId> / ENDPOINT#<id>                         an endpoint: url, events, secret
//   WEBHOOK#<endpointId> / DELIVERY#<createdAt>#<deliveryId>   a delivery (one event to one
//                                                            endpoint): its body, status, attempts;
//                                                            deleted by TTL after DELIVERY_DAYS
// A user's endpoints are one partition: an event's fan-out reads it with one Query, and an id of
// anyone else's is simply not in the caller's partition (not found, no oracle).

export interface WebhookEndpoint {
  id: string;
  userId: string;
  url: string;
  events: string[];
  /** `whsec_…`: shown once at creation; the delivery function signs with it. */
  secret: string;
  createdAt: string;
}

export type DeliveryStatus = 'pending' | 'retrying' | 'delivered' | 'failed';

export interface Delivery {
  /** The webhook-id header: the same on every attempt. */
  id: string;
  endpointId: string;
  userId: string;
  type: string;
  /** The body sent, byte for byte, on every attempt. */
  body: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode?: number;
  lastError?: string;
  nextAttemptAt?: string;
  createdAt: string;
  updatedAt: string;
}

/** Deliveries are kept this long (the retries span about a day). */
export const DELIVERY_DAYS = 30;

const endpointKey = (userId: string, id: string) => ({ PK: `WEBHOOKS#${userId}`, SK: `ENDPOINT#${id}` });
const deliveryPk = (endpointId: string) => `WEBHOOK#${endpointId}`;
const deliveryKey = (d: Pick<Delivery, 'endpointId' | 'createdAt' | 'id'>) => ({
  PK: deliveryPk(d.endpointId),
  SK: `DELIVERY#${d.createdAt}#${d.id}`,
});

export const endpointNotFound = () => new NotFoundError('Webhook endpoint not found');

function endpointFromItem(item: Item): WebhookEndpoint {
  const { id, userId, url, events, secret, createdAt } = item as unknown as WebhookEndpoint;
  return { id, userId, url, events: [...events], secret, createdAt };
}

function deliveryFromItem(item: Item): Delivery {
  const { PK: _pk, SK: _sk, expiresAt: _ttl, ...rest } = item;
  return rest as unknown as Delivery;
}

export class WebhookRepository extends Repository {
  async createEndpoint(endpoint: WebhookEndpoint): Promise<void> {
    await putNew(this.db, {
      TableName: this.table,
      Item: { ...endpointKey(endpoint.userId, endpoint.id), ...endpoint },
    });
  }

  /** The caller's endpoints (at most WEBHOOKS_MAX_PER_USER: one partition, read whole). */
  listEndpoints(userId: string): Promise<WebhookEndpoint[]> {
    return queryAll(
      this.db,
      {
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
        ExpressionAttributeValues: { ':pk': `WEBHOOKS#${userId}`, ':sk': 'ENDPOINT#' },
        ConsistentRead: true,
      },
      endpointFromItem,
    );
  }

  /** One page of the caller's endpoints (by id). */
  listEndpointPage(
    userId: string,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<Page<WebhookEndpoint>> {
    return queryPage(
      this.db,
      {
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
        ExpressionAttributeValues: { ':pk': `WEBHOOKS#${userId}`, ':sk': 'ENDPOINT#' },
      },
      { ...page, keyAttributes: ['PK', 'SK'], fixed: { PK: `WEBHOOKS#${userId}` }, prefixes: { SK: 'ENDPOINT#' } },
      endpointFromItem,
    );
  }

  /** The caller's endpoint; anyone else's is not found. */
  async getEndpoint(userId: string, id: string): Promise<WebhookEndpoint | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.table, Key: endpointKey(userId, id), ConsistentRead: true }),
    );
    return Item ? endpointFromItem(Item) : undefined;
  }

  /** Deletes the caller's endpoint and its delivery log; NotFoundError when there is none. */
  async deleteEndpoint(userId: string, id: string): Promise<void> {
    const out = await this.db.send(
      new DeleteCommand({ TableName: this.table, Key: endpointKey(userId, id), ReturnValues: 'ALL_OLD' }),
    );
    if (!out.Attributes) throw endpointNotFound();
    await deleteAll(this.db, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': deliveryPk(id) },
    });
  }

  /** Records a delivery; false when it exists already (a fan-out done again). */
  createDelivery(delivery: Delivery, expiresAt: number): Promise<boolean> {
    return putIfAbsent(this.db, { TableName: this.table, Item: { ...deliveryKey(delivery), ...delivery, expiresAt } });
  }

  async getDelivery(key: Pick<Delivery, 'endpointId' | 'createdAt' | 'id'>): Promise<Delivery | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.table, Key: deliveryKey(key), ConsistentRead: true }),
    );
    return Item ? deliveryFromItem(Item) : undefined;
  }

  /**
   * Records attempt `attempt` (1-based) and its outcome, on condition that it is the next one: a
   * redelivered message of an attempt already recorded changes nothing (false).
   */
  recordAttempt(
    key: Pick<Delivery, 'endpointId' | 'createdAt' | 'id'>,
    attempt: number,
    outcome: Pick<Delivery, 'status' | 'lastStatusCode' | 'lastError' | 'nextAttemptAt'>,
    now: string,
  ): Promise<boolean> {
    const set: Record<string, unknown> = { status: outcome.status, attempts: attempt, updatedAt: now };
    const remove: string[] = [];
    for (const name of ['lastStatusCode', 'lastError', 'nextAttemptAt'] as const) {
      if (outcome[name] === undefined) remove.push(name);
      else set[name] = outcome[name];
    }
    const names = Object.fromEntries([...Object.keys(set), ...remove].map((k) => [`#${k}`, k]));
    const values = Object.fromEntries(Object.entries(set).map(([k, v]) => [`:${k}`, v]));
    const setClause = `SET ${Object.keys(set)
      .map((k) => `#${k} = :${k}`)
      .join(', ')}`;
    const removeClause = remove.length ? ` REMOVE ${remove.map((k) => `#${k}`).join(', ')}` : '';
    return applyIf(this.db, {
      TableName: this.table,
      Key: deliveryKey(key),
      UpdateExpression: setClause + removeClause,
      ConditionExpression: 'attribute_exists(PK) AND #attempts = :previous',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ...values, ':previous': attempt - 1 },
    });
  }

  /** One page of an endpoint's deliveries, newest first. */
  listDeliveries(endpointId: string, page: { limit: number; cursor?: string | undefined }): Promise<Page<Delivery>> {
    return queryPage(
      this.db,
      {
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :sk)',
        ExpressionAttributeValues: { ':pk': deliveryPk(endpointId), ':sk': 'DELIVERY#' },
        ScanIndexForward: false,
      },
      {
        ...page,
        keyAttributes: ['PK', 'SK'],
        fixed: { PK: deliveryPk(endpointId) },
        prefixes: { SK: 'DELIVERY#' },
      },
      deliveryFromItem,
    );
  }
}
