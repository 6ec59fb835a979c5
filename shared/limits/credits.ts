import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '../dynamo.ts';

// Tokens bought with orders (docs/DECISIONS.md "Credits"): one item per user, `LIMIT#<user>` /
// `CREDITS`, holding `granted` (what paid orders granted, less what refunds took back), `left`
// (the pool not yet used) and the ids of the orders granted and refunded. Credits are a one-off
// pool, used only once the day's budget is spent.
//
// Exactly once per order: a grant is one conditional write (the order not granted nor refunded
// yet) that adds the tokens and the order's id together, so a replayed event, or a grant retried
// after a crash, changes nothing. A refund is one conditional write too (the order not refunded
// yet, `left` still what was read) that takes back what is left of the order's tokens, never
// below zero, and records the refund (a late grant of that order is then refused).

const MAX_ATTEMPTS = 5;

export interface CreditBalance {
  granted: number;
  left: number;
}

const key = (userId: string) => ({ PK: `LIMIT#${userId}`, SK: 'CREDITS' });

export class Credits {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** Adds `tokens` for a paid order, once; false when the order was granted or refunded before. */
  async grant(userId: string, orderId: string, tokens: number): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key(userId),
          ConditionExpression: 'NOT contains(grantedOrders, :orderId) AND NOT contains(refundedOrders, :orderId)',
          UpdateExpression: 'ADD granted :tokens, #left :tokens, grantedOrders :orders',
          ExpressionAttributeNames: { '#left': 'left' },
          ExpressionAttributeValues: { ':orderId': orderId, ':tokens': tokens, ':orders': new Set([orderId]) },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  /**
   * Takes back a refunded order's tokens, once: what is left of them (the pool never goes below
   * zero; tokens already used stay used). The tokens taken back (0 when the order granted none or
   * was refunded before).
   */
  async takeBack(userId: string, orderId: string, tokens: number): Promise<number> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const item = await this.item(userId);
      if (item.refundedOrders.has(orderId)) return 0;
      const granted = item.grantedOrders.has(orderId);
      const taken = granted ? Math.min(tokens, Math.max(0, item.left)) : 0;
      const values: Record<string, unknown> = { ':orderId': orderId, ':orders': new Set([orderId]), ':taken': -taken };
      if (item.exists) values[':left'] = item.left;
      if (granted) values[':ungranted'] = -tokens;
      try {
        await this.db.send(
          new UpdateCommand({
            TableName: this.table,
            Key: key(userId),
            ConditionExpression: `NOT contains(refundedOrders, :orderId) AND ${granted ? 'contains' : 'NOT contains'}(grantedOrders, :orderId) AND ${item.exists ? '#left = :left' : 'attribute_not_exists(#left)'}`,
            UpdateExpression: `ADD refundedOrders :orders, #left :taken${granted ? ', granted :ungranted' : ''}`,
            ExpressionAttributeNames: { '#left': 'left' },
            ExpressionAttributeValues: values,
          }),
        );
        return taken;
      } catch (err) {
        if (!isConditionFailure(err)) throw err;
      }
    }
    throw new Error(`Credits of order ${orderId} lost ${MAX_ATTEMPTS} races`);
  }

  /** Takes `tokens` from the pool if that many are left; false (nothing taken) otherwise. */
  async tryUse(userId: string, tokens: number): Promise<boolean> {
    if (tokens <= 0) return true;
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key(userId),
          ConditionExpression: '#left >= :tokens',
          UpdateExpression: 'ADD #left :used',
          ExpressionAttributeNames: { '#left': 'left' },
          ExpressionAttributeValues: { ':tokens': tokens, ':used': -tokens },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }

  /** Takes up to `tokens` from the pool (what is left, never below zero); the tokens taken. */
  async useUpTo(userId: string, tokens: number): Promise<number> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS && tokens > 0; attempt++) {
      const { left } = await this.balance(userId);
      const taken = Math.min(tokens, left);
      if (taken <= 0) return 0;
      if (await this.tryUse(userId, taken)) return taken;
    }
    return 0;
  }

  /** Gives back to the pool what a reservation held but was not used (negative: takes more). */
  async adjust(userId: string, tokens: number): Promise<void> {
    if (!tokens) return;
    await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: key(userId),
        UpdateExpression: 'ADD #left :tokens',
        ExpressionAttributeNames: { '#left': 'left' },
        ExpressionAttributeValues: { ':tokens': tokens },
      }),
    );
  }

  async balance(userId: string): Promise<CreditBalance> {
    const { granted, left } = await this.item(userId);
    return { granted, left };
  }

  private async item(userId: string) {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: key(userId), ConsistentRead: true }));
    const item = out.Item;
    return {
      exists: item?.left !== undefined,
      granted: Math.max(0, (item?.granted as number | undefined) ?? 0),
      left: (item?.left as number | undefined) ?? 0,
      grantedOrders: (item?.grantedOrders as Set<string> | undefined) ?? new Set<string>(),
      refundedOrders: (item?.refundedOrders as Set<string> | undefined) ?? new Set<string>(),
    };
  }
}
