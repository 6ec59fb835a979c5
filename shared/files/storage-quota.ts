import { DeleteCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { isoNow, type Clock } from '../clock.ts';
import { ConflictError } from '../errors.ts';
import type { UsageCounters } from '../limits/usage-counters.ts';
import type { FileStorage } from './storage.ts';

// What a user may keep in the bucket (USER_STORAGE_MAX_BYTES; docs/DECISIONS.md "Storage
// quota"). POST /upload charges the declared size (the presigned PUT signs it, so the object
// cannot be larger) with one conditional ADD on the user's STORAGE counter; deleting the file
// gives it back. Deleting cannot revoke a presigned PUT that is still valid, and a PUT after the
// delete would put the object back with nothing pointing at it. So a file deleted while its
// upload URL is valid stays charged: a pending purge (`LIMIT#<user>` / `PURGE#<fileId>`) names
// its key until the URL expires; then the user's next upload deletes the key (whatever was put
// there late) and gives the bytes back. Deployed, the bucket's lifecycle rule on uploads/ is the
// backstop for users who never upload again.

const STORAGE_COUNTER = 'STORAGE';
const PURGE_PREFIX = 'PURGE#';
/** A pending purge outlives its URL by this much before DynamoDB TTL may collect it (never relied upon). */
const KEEP_SECONDS = 30 * 86_400;

interface PendingPurge {
  fileId: string;
  s3Key: string;
  bytes: number;
  /** When the upload URL has expired: from then on nothing can put the key back. */
  purgeAfter: string;
}

export class StorageQuota {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly counters: UsageCounters,
    private readonly storage: FileStorage,
    private readonly settings: { maxBytes: number },
    private readonly clock: Clock,
  ) {}

  /**
   * Charges `bytes` to the user, after purging what has come due. Refused (a ConflictError,
   * nothing charged) when the user's files would then exceed the quota.
   * 0 bytes of quota: no limit, nothing counted.
   */
  async charge(userId: string, bytes: number): Promise<number> {
    const { maxBytes } = this.settings;
    if (!maxBytes) return 0;
    await this.purgeDue(userId);
    const used = await this.counters.tryAdd({ subject: userId, counter: STORAGE_COUNTER }, bytes, maxBytes);
    if (used === undefined) {
      const now = await this.counters.get({ subject: userId, counter: STORAGE_COUNTER });
      throw new ConflictError(
        `Your files use ${now} of your ${maxBytes} bytes; delete some to upload ${bytes} more`,
        'STORAGE_QUOTA_EXCEEDED',
      );
    }
    return bytes;
  }

  /** Gives back what a failed upload charged (nothing was stored under it). */
  async refund(userId: string, bytes: number): Promise<void> {
    if (bytes) await this.counters.add({ subject: userId, counter: STORAGE_COUNTER }, -bytes);
  }

  /**
   * A deleted file's bytes: given back now when its upload URL has expired, else held by a
   * pending purge. Written before the file record goes, so a delete that dies half-way and is
   * tried again writes the same purge (a put of the same item), never a second refund.
   */
  async release(file: { userId: string; id: string; s3Key: string; quotaBytes?: number }, urlExpiresAt: Date) {
    const bytes = file.quotaBytes ?? 0; // files uploaded before the quota were never charged
    if (urlExpiresAt.getTime() <= this.clock().getTime()) return this.refund(file.userId, bytes);
    const purge: PendingPurge = { fileId: file.id, s3Key: file.s3Key, bytes, purgeAfter: urlExpiresAt.toISOString() };
    await this.db.send(
      new PutCommand({
        TableName: this.table,
        Item: {
          PK: `LIMIT#${file.userId}`,
          SK: `${PURGE_PREFIX}${file.id}`,
          ...purge,
          expiresAt: Math.floor(urlExpiresAt.getTime() / 1000) + KEEP_SECONDS,
        },
      }),
    );
  }

  /**
   * The user's pending purges whose URL has expired: the key deleted (a late PUT's object goes
   * with it), then the purge item, then its bytes given back. Only the caller that deletes the
   * item gives the bytes back, so two uploads at once never refund twice.
   */
  async purgeDue(userId: string): Promise<number> {
    const now = isoNow(this.clock);
    const { Items = [] } = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :purge)',
        FilterExpression: 'purgeAfter <= :now',
        ExpressionAttributeValues: { ':pk': `LIMIT#${userId}`, ':purge': PURGE_PREFIX, ':now': now },
        ConsistentRead: true,
      }),
    );
    const due = Items as (PendingPurge & { SK: string })[];
    if (!due.length) return 0;
    await this.storage.deleteKeys(due.map((p) => p.s3Key));
    let purged = 0;
    for (const p of due) {
      const { Attributes } = await this.db.send(
        new DeleteCommand({
          TableName: this.table,
          Key: { PK: `LIMIT#${userId}`, SK: p.SK },
          ReturnValues: 'ALL_OLD',
        }),
      );
      if (!Attributes) continue; // another upload purged it first
      await this.refund(userId, p.bytes);
      purged += 1;
    }
    return purged;
  }
}
