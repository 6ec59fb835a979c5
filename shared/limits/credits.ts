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
//
// Replies in flight: a reply's reservation moves its tokens from `left` to `held` until it
// settles. A refund that finds fewer tokens left than its order granted, while replies hold
// some, notes the part it could not take as `owed` (at most what is held); a settling reply pays
// what is owed out of what it did not use before giving the rest back, so a refund made while a
// reply runs takes back what that reply leaves unused (docs/DECISIONS.md "Credits").

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
      // What replies in flight hold of this order's tokens: paid back when they settle.
      const owed = granted ? Math.min(tokens - taken, Math.max(0, item.held - item.owed)) : 0;
      const read = unchanged(item, ['left', 'held', 'owed']);
      try {
        await this.db.send(
          new UpdateCommand({
            TableName: this.table,
            Key: key(userId),
            ConditionExpression: `NOT contains(refundedOrders, :orderId) AND ${granted ? 'contains' : 'NOT contains'}(grantedOrders, :orderId) AND ${read.condition}`,
            UpdateExpression: `ADD refundedOrders :orders, #left :taken${granted ? ', granted :ungranted, #owed :owed' : ''}`,
            ExpressionAttributeNames: read.names,
            ExpressionAttributeValues: {
              ':orderId': orderId,
              ':orders': new Set([orderId]),
              ':taken': -taken,
              ...(granted && { ':ungranted': -tokens, ':owed': owed }),
              ...read.values,
            },
          }),
        );
        return taken;
      } catch (err) {
        if (!isConditionFailure(err)) throw err;
      }
    }
    throw new Error(`Credits of order ${orderId} lost ${MAX_ATTEMPTS} races`);
  }

  /**
   * Holds `tokens` of the pool for a reply if that many are left (they leave `left` for `held`
   * until the reply settles); false (nothing held) otherwise.
   */
  reserve(userId: string, tokens: number): Promise<boolean> {
    return this.takeIfLeft(userId, tokens, 'ADD #left :used, held :tokens');
  }

  /**
   * Ends a reservation of `reserved` tokens of which the reply used `used`: what it did not use
   * first pays what a refund made meanwhile could not take (`owed`), and only the rest goes back
   * to the pool; using more than reserved takes the difference. One conditional write on `held`
   * and `owed` as read (read again on a race); `left` is only added to.
   */
  async settle(userId: string, reserved: number, used: number): Promise<void> {
    if (reserved <= 0 && used <= 0) return;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const item = await this.item(userId);
      const unused = reserved - used;
      const paid = Math.min(item.owed, Math.max(0, unused));
      const held = Math.max(0, item.held - reserved);
      // What no reservation in flight can pay any more was used: tokens used stay used.
      const owed = Math.min(item.owed - paid, held);
      const read = unchanged(item, ['held', 'owed']);
      try {
        await this.db.send(
          new UpdateCommand({
            TableName: this.table,
            Key: key(userId),
            ConditionExpression: read.condition,
            UpdateExpression: 'SET #held = :held, #owed = :owed ADD #left :back',
            ExpressionAttributeNames: { ...read.names, '#left': 'left' },
            ExpressionAttributeValues: { ':held': held, ':owed': owed, ':back': unused - paid, ...read.values },
          }),
        );
        return;
      } catch (err) {
        if (!isConditionFailure(err)) throw err;
      }
    }
    throw new Error(`A reservation of ${userId}'s credits lost ${MAX_ATTEMPTS} races`);
  }

  /** Takes `tokens` from the pool if that many are left; false (nothing taken) otherwise. */
  tryUse(userId: string, tokens: number): Promise<boolean> {
    return this.takeIfLeft(userId, tokens, 'ADD #left :used');
  }

  /** Applies `update` (`:used` is −tokens, `:tokens` tokens) if `tokens` are left; false (nothing changed) otherwise. */
  private async takeIfLeft(userId: string, tokens: number, update: string): Promise<boolean> {
    if (tokens <= 0) return true;
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key(userId),
          ConditionExpression: '#left >= :tokens',
          UpdateExpression: update,
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
      held: (item?.held as number | undefined) ?? 0,
      owed: (item?.owed as number | undefined) ?? 0,
      stored: {
        left: item?.left as number | undefined,
        held: item?.held as number | undefined,
        owed: item?.owed as number | undefined,
      },
      grantedOrders: (item?.grantedOrders as Set<string> | undefined) ?? new Set<string>(),
      refundedOrders: (item?.refundedOrders as Set<string> | undefined) ?? new Set<string>(),
    };
  }
}

type Counted = 'left' | 'held' | 'owed';

/** A condition that the attributes named are still as read (absent when they were). */
function unchanged({ stored }: { stored: Record<Counted, number | undefined> }, attributes: readonly Counted[]) {
  const names: Record<string, string> = {};
  const values: Record<string, number> = {};
  const parts = attributes.map((name) => {
    names[`#${name}`] = name;
    const value = stored[name];
    if (value === undefined) return `attribute_not_exists(#${name})`;
    values[`:read_${name}`] = value;
    return `#${name} = :read_${name}`;
  });
  return { condition: parts.join(' AND '), names, values };
}
