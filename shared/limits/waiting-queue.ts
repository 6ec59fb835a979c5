import { DeleteCommand, PutCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

// A user's work waiting for an in-flight slot (docs/DECISIONS.md "Fair bulk ingestion"): one
// item per waiting entry in the user's limits partition, `LIMIT#<subject>` /
// `WAIT#<kind>#<queuedAt>#<id>`, so a Query in key order reads the oldest first and erasing the
// user's limits partition drops the queue with it. An entry only names the work (an id and its
// run); whether it is still wanted is its owner's record to say when it is taken.

export interface WaitingEntry {
  subject: string;
  kind: string;
  /** The waiting work's id (a file id) and the run it waits with. */
  id: string;
  runId: string;
  queuedAt: string;
}

/** The queue of PDF ingestions waiting for an in-flight slot. */
export const INGESTION_QUEUE = 'ingestions';

const pk = (subject: string) => `LIMIT#${subject}`;
const prefix = (kind: string) => `WAIT#${kind}#`;
const sk = (e: Pick<WaitingEntry, 'kind' | 'queuedAt' | 'id'>) => `${prefix(e.kind)}${e.queuedAt}#${e.id}`;

export class WaitingQueue {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async add(entry: WaitingEntry): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.table,
        Item: { PK: pk(entry.subject), SK: sk(entry), ...entry },
      }),
    );
  }

  /** The `limit` oldest entries of the subject's queue of `kind`. */
  async oldest(subject: string, kind: string, limit: number): Promise<WaitingEntry[]> {
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
        ExpressionAttributeValues: { ':pk': pk(subject), ':prefix': prefix(kind) },
        ConsistentRead: true,
        Limit: limit,
      }),
    );
    return (out.Items ?? []).map((item) => ({
      subject,
      kind,
      id: item.id as string,
      runId: item.runId as string,
      queuedAt: item.queuedAt as string,
    }));
  }

  /**
   * How many entries wait, counted up to `upTo` (a quota check needs no more); with `before`,
   * only that entry and those queued ahead of it (its place in the queue, from 1).
   */
  async count(subject: string, kind: string, p: { upTo: number; before?: Pick<WaitingEntry, 'queuedAt' | 'id'> }) {
    const values: Record<string, string> = { ':pk': pk(subject), ':from': prefix(kind) };
    if (p.before) values[':to'] = sk({ kind, ...p.before });
    const out = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: p.before
          ? 'PK = :pk AND SK BETWEEN :from AND :to'
          : 'PK = :pk AND begins_with(SK, :from)',
        ExpressionAttributeValues: values,
        ConsistentRead: true,
        Select: 'COUNT',
        Limit: p.upTo,
      }),
    );
    return out.Count ?? 0;
  }

  async remove(entry: WaitingEntry): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.table, Key: { PK: pk(entry.subject), SK: sk(entry) } }));
  }
}
