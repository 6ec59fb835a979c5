import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mapLimit } from './map-limit.ts';

// What every repository needs from DynamoDB beyond single calls: recognising a lost
// conditional write, and batch reads/writes that retry what DynamoDB left unprocessed.

const BATCH_WRITE_MAX = 25;
const BATCH_GET_MAX = 100;
const MAX_ATTEMPTS = 10;

export const isConditionFailure = (err: unknown): boolean =>
  err instanceof ConditionalCheckFailedException || (err as Error | undefined)?.name === 'ConditionalCheckFailedException';

const backoff = (attempt: number) =>
  new Promise((r) => setTimeout(r, Math.min(2_000, 25 * 2 ** attempt) * (0.5 + Math.random() / 2)));

// mapLimit lives in a dependency-free module (the Bedrock provider uses it without loading DynamoDB).
export { mapLimit };

export type WriteRequest = { PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: Record<string, unknown> } };

/** BatchWriteItem in batches of 25 (`concurrency` at once), retrying unprocessed items with backoff. */
export async function batchWriteAll(
  db: DynamoDBDocumentClient,
  table: string,
  requests: WriteRequest[],
  concurrency = 1,
): Promise<void> {
  const batches: WriteRequest[][] = [];
  for (let i = 0; i < requests.length; i += BATCH_WRITE_MAX) batches.push(requests.slice(i, i + BATCH_WRITE_MAX));
  await mapLimit(batches, concurrency, async (batch) => {
    let pending = batch;
    for (let attempt = 0; pending.length; attempt++) {
      if (attempt >= MAX_ATTEMPTS) throw new Error(`BatchWriteItem left ${pending.length} items unprocessed`);
      if (attempt > 0) await backoff(attempt);
      const out = await db.send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
      pending = (out.UnprocessedItems?.[table] ?? []) as WriteRequest[];
    }
  });
}

/** BatchGetItem in batches of 100, retrying unprocessed keys; the items found (any order). */
export async function batchGetAll(
  db: DynamoDBDocumentClient,
  table: string,
  keys: Record<string, unknown>[],
  options: { consistentRead?: boolean } = {},
): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  for (let i = 0; i < keys.length; i += BATCH_GET_MAX) {
    let pending = keys.slice(i, i + BATCH_GET_MAX);
    for (let attempt = 0; pending.length; attempt++) {
      if (attempt >= MAX_ATTEMPTS) throw new Error(`BatchGetItem left ${pending.length} keys unprocessed`);
      if (attempt > 0) await backoff(attempt);
      const out = await db.send(
        new BatchGetCommand({ RequestItems: { [table]: { Keys: pending, ...(options.consistentRead && { ConsistentRead: true }) } } }),
      );
      found.push(...(out.Responses?.[table] ?? []));
      pending = (out.UnprocessedKeys?.[table]?.Keys ?? []) as Record<string, unknown>[];
    }
  }
  return found;
}
