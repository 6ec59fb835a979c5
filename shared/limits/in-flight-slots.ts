import { DeleteCommand, QueryCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isConditionFailure } from '../dynamo.ts';

// Per-user slots for work in flight (docs/DECISIONS.md "Atomic admission of work in flight"):
// `LIMIT#<subject>` / `SLOT#<kind>#<n>` for n below the limit, each holding its `holder`, when it
// was taken and until when its lease runs (`leaseUntil`, ms). Taking a slot is one conditional
// write on one item (free: no holder, or the lease ran out), so two instances can never take the
// same slot, and a slot is reserved before any slow work starts. A holder that dies without
// releasing holds its slot only until its lease ends; a caller that can tell a holder is done
// (its run ended) may reclaim the slot at once, with a write conditional on that holder.
// A counter (ADD with `inFlight < :max`) was rejected: it cannot forget a crashed holder.

export interface SlotKey {
  /** Whose slots (a user id). */
  subject: string;
  /** Which kind of work (`ingestions`, `replies`). */
  kind: string;
}

/** A slot as taken or read. */
export interface HeldSlot {
  subject: string;
  /** The slot's sort key (`SLOT#<kind>#<n>`). */
  slot: string;
  holder: string;
  takenAt: number;
  leaseUntil: number;
}

const slotPrefix = (kind: string) => `SLOT#${kind}#`;
const pk = (subject: string) => `LIMIT#${subject}`;

export class InFlightSlots {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /**
   * Takes one of the `max` slots for `holder` until `now + leaseMs`: the first that is free (or
   * whose holder `reclaimable` says is done). Undefined when all are held.
   */
  async take(
    key: SlotKey,
    p: {
      holder: string;
      max: number;
      leaseMs: number;
      now: number;
      reclaimable?: (slot: HeldSlot) => Promise<boolean>;
    },
  ): Promise<HeldSlot | undefined> {
    const taken = (slot: string): HeldSlot => ({
      subject: key.subject,
      slot,
      holder: p.holder,
      takenAt: p.now,
      leaseUntil: p.now + p.leaseMs,
    });
    for (let n = 0; n < p.max; n++) {
      const slot = `${slotPrefix(key.kind)}${n}`;
      if (await this.write(taken(slot), 'attribute_not_exists(#holder) OR #leaseUntil < :now', { ':now': p.now }))
        return taken(slot);
    }
    if (!p.reclaimable) return undefined;
    for (const held of await this.held(key)) {
      if (Number(held.slot.slice(slotPrefix(key.kind).length)) >= p.max) continue;
      if (!(await p.reclaimable(held))) continue;
      if (await this.write(taken(held.slot), '#holder = :previous', { ':previous': held.holder }))
        return taken(held.slot);
    }
    return undefined;
  }

  /** Moves the lease of a slot still held by its holder (false: it is not). */
  extend(slot: HeldSlot, leaseUntil: number): Promise<boolean> {
    return this.write({ ...slot, leaseUntil }, '#holder = :previous', { ':previous': slot.holder });
  }

  /** Frees the slot if its holder still holds it. */
  async release(slot: Pick<HeldSlot, 'subject' | 'slot' | 'holder'>): Promise<void> {
    try {
      await this.db.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { PK: pk(slot.subject), SK: slot.slot },
          ConditionExpression: 'holder = :holder',
          ExpressionAttributeValues: { ':holder': slot.holder },
        }),
      );
    } catch (err) {
      if (!isConditionFailure(err)) throw err;
    }
  }

  /**
   * Frees whichever slot of this kind `holder` still holds (none: nothing). The write is
   * conditional on the holder, so a slot another holder took meanwhile stays theirs, and a second
   * release changes nothing.
   */
  async releaseHeldBy(key: SlotKey, holder: string): Promise<void> {
    for (const slot of await this.held(key)) if (slot.holder === holder) await this.release(slot);
  }

  /** Every slot of this kind with a holder (leases that ran out included). */
  async held(key: SlotKey): Promise<HeldSlot[]> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': pk(key.subject), ':prefix': slotPrefix(key.kind) },
        ConsistentRead: true,
      }),
    );
    return (out.Items ?? []).map((item) => ({
      subject: key.subject,
      slot: item.SK as string,
      holder: item.holder as string,
      takenAt: item.takenAt as number,
      leaseUntil: item.leaseUntil as number,
    }));
  }

  private async write(slot: HeldSlot, condition: string, values: Record<string, unknown>): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.table,
          Key: { PK: pk(slot.subject), SK: slot.slot },
          UpdateExpression:
            'SET #holder = :holder, #takenAt = :takenAt, #leaseUntil = :leaseUntil, #expiresAt = :expiresAt',
          ConditionExpression: condition,
          ExpressionAttributeNames: {
            '#holder': 'holder',
            '#takenAt': 'takenAt',
            '#leaseUntil': 'leaseUntil',
            '#expiresAt': 'expiresAt',
          },
          ExpressionAttributeValues: {
            ...values,
            ':holder': slot.holder,
            ':takenAt': slot.takenAt,
            ':leaseUntil': slot.leaseUntil,
            // DynamoDB TTL (deployed) collects a slot a day after its lease; never relied upon.
            ':expiresAt': Math.floor(slot.leaseUntil / 1000) + 86_400,
          },
        }),
      );
      return true;
    } catch (err) {
      if (isConditionFailure(err)) return false;
      throw err;
    }
  }
}
