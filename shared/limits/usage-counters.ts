import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { deleteAll, isConditionFailure } from '../dynamo.ts';

// Per-user counters in the single table, shared by every Lambda instance: `LIMIT#<subject>` /
// `<counter>` holding `used`. Changes are atomic `ADD`s, and a limit is a condition on the value
// before the change, so two instances can never both take the last unit (dynalite has no
// transactions, and none are needed). Windows are part of the counter's name (e.g.
// `RATE#messages#29381947`, `TOKENS#2026-11-22`), so correctness never depends on expiry; the
// `expiresAt` attribute only lets DynamoDB TTL (deployed) collect old windows.
//
// Reusable for any per-user limit: a rate (a counter per window), a budget (a counter per day),
// or a number in flight (`tryAdd(+1)` to start, `add(-1)` when done).

interface CounterKey {
  /** Whose counter (a user id). */
  subject: string;
  /** Which counter of the subject, window included. */
  counter: string;
}

const key = (k: CounterKey) => ({ PK: `LIMIT#${k.subject}`, SK: k.counter });

export class UsageCounters {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /**
   * Deletes every item of a subject's partition: its counters, and what else is kept there (the
   * in-flight slots, pending upload purges). How many.
   */
  deleteSubject(subject: string): Promise<number> {
    return deleteAll(this.db, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': `LIMIT#${subject}` },
      ConsistentRead: true,
    });
  }

  /**
   * Adds `amount` unless the counter would then exceed `limit`. The new value, or undefined when
   * refused (nothing changed).
   */
  async tryAdd(k: CounterKey, amount: number, limit: number, expiresAt?: number): Promise<number | undefined> {
    if (amount > limit) return undefined;
    try {
      const out = await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key(k),
          UpdateExpression: `ADD #used :amount${expiresAt ? ' SET #expiresAt = :expiresAt' : ''}`,
          ConditionExpression: 'attribute_not_exists(#used) OR #used <= :room',
          ExpressionAttributeNames: { '#used': 'used', ...(expiresAt && { '#expiresAt': 'expiresAt' }) },
          ExpressionAttributeValues: {
            ':amount': amount,
            ':room': limit - amount,
            ...(expiresAt && { ':expiresAt': expiresAt }),
          },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return out.Attributes?.used as number;
    } catch (err) {
      if (isConditionFailure(err)) return undefined;
      throw err;
    }
  }

  /** Adds `amount` (negative to give back) whatever the value; the new value. */
  async add(k: CounterKey, amount: number, expiresAt?: number): Promise<number> {
    const out = await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: key(k),
        UpdateExpression: `ADD #used :amount${expiresAt ? ' SET #expiresAt = :expiresAt' : ''}`,
        ExpressionAttributeNames: { '#used': 'used', ...(expiresAt && { '#expiresAt': 'expiresAt' }) },
        ExpressionAttributeValues: { ':amount': amount, ...(expiresAt && { ':expiresAt': expiresAt }) },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return out.Attributes?.used as number;
  }

  /** The counter's value (0 when it was never written). */
  async get(k: CounterKey): Promise<number> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: key(k), ConsistentRead: true }));
    return (out.Item?.used as number | undefined) ?? 0;
  }
}
