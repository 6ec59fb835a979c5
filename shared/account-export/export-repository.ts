import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { applyIf, queryPages, Repository, updateIf, type Item } from '../dynamo.ts';

// An export job is an item of the user's partition, USER#<userId> / EXPORT#<exportId> (so the
// erasure's delete of the partition takes it), with `expiresAt` for DynamoDB TTL. While it waits
// to be built it also sits in the sparse GSI2 partition EXPORTS, where the sweep finds it; a build
// takes a lease on it (status building, leaseUntil), so a build that died is taken again once
// the lease has run out (docs/DECISIONS.md "Account export").

export const exportStatuses = ['pending', 'building', 'ready', 'failed'] as const;
export type ExportStatus = (typeof exportStatuses)[number];

export interface ExportJob {
  id: string;
  userId: string;
  status: ExportStatus;
  createdAt: string;
  /** Epoch seconds: when the job (and its ZIP) goes. */
  expiresAt: number;
  attempts: number;
}

const TO_BUILD = 'EXPORTS';
const exportKey = (userId: string, exportId: string) => ({ PK: `USER#${userId}`, SK: `EXPORT#${exportId}` });

const fromItem = (item: Item): ExportJob => ({
  id: item.id as string,
  userId: item.userId as string,
  status: item.status as ExportStatus,
  createdAt: item.createdAt as string,
  expiresAt: item.expiresAt as number,
  attempts: (item.attempts as number | undefined) ?? 0,
});

export class ExportRepository extends Repository {
  async create(job: Omit<ExportJob, 'status' | 'attempts'>): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.table,
        Item: {
          ...exportKey(job.userId, job.id),
          ...job,
          status: 'pending',
          attempts: 0,
          GSI2PK: TO_BUILD,
          GSI2SK: `${job.createdAt}#${job.id}`,
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
  }

  /** The user's export job (another user's is not in this partition). */
  async get(userId: string, exportId: string): Promise<ExportJob | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: exportKey(userId, exportId) }));
    return out.Item && fromItem(out.Item);
  }

  /** Jobs still to build (pending, or building under a lease that may have run out), oldest first. */
  async *toBuild(): AsyncGenerator<ExportJob> {
    const pages = queryPages(this.db, {
      TableName: this.table,
      IndexName: 'GSI2',
      KeyConditionExpression: 'GSI2PK = :toBuild',
      ExpressionAttributeValues: { ':toBuild': TO_BUILD },
    });
    for await (const items of pages) for (const item of items) yield fromItem(item);
  }

  /** Takes the job for a build until `leaseUntil` when it is pending or its last lease ran out; the job, or undefined when another build holds it. */
  async lease(job: ExportJob, now: string, leaseUntil: string): Promise<ExportJob | undefined> {
    const updated = await updateIf(this.db, {
      TableName: this.table,
      Key: exportKey(job.userId, job.id),
      UpdateExpression: 'SET #status = :building, leaseUntil = :until ADD attempts :one',
      ConditionExpression:
        'attribute_exists(GSI2PK) AND (#status = :pending OR (#status = :building AND leaseUntil < :now))',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':building': 'building',
        ':pending': 'pending',
        ':until': leaseUntil,
        ':now': now,
        ':one': 1,
      },
      ReturnValues: 'ALL_NEW',
    });
    return updated && fromItem(updated);
  }

  /** Ends the job (ready or failed): out of the sweep's index. False when it is gone (erased). */
  async finish(job: ExportJob, status: 'ready' | 'failed', now: string): Promise<boolean> {
    return applyIf(this.db, {
      TableName: this.table,
      Key: exportKey(job.userId, job.id),
      UpdateExpression: 'SET #status = :status, finishedAt = :now REMOVE GSI2PK, GSI2SK, leaseUntil',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':status': status, ':now': now },
    });
  }
}
