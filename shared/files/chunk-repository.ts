import { BatchGetCommand, BatchWriteCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

// Chunks of a file (DESIGN §5): FILE#<fileId> / CHUNK#<n, 6 digits>, with the text, its pages,
// its token count, the run that wrote it and the embedding as a float32 Binary. The key is a
// function of the chunk's number only, so writing a chunk again (a redelivered message) replaces
// it instead of adding one; a re-ingestion overwrites chunk n and deletes any beyond its count.

export const CHUNK_DIGITS = 6;

export interface ChunkItem {
  fileId: string;
  runId: string;
  n: number;
  text: string;
  page: number;
  pageEnd: number;
  pageStarts: [number, number][];
  tokens: number;
  /** float32, little-endian. */
  embedding: Uint8Array;
}

const chunkPk = (fileId: string) => `FILE#${fileId}`;
const chunkSk = (n: number) => `CHUNK#${String(n).padStart(CHUNK_DIGITS, '0')}`;
const chunkKey = (fileId: string, n: number) => ({ PK: chunkPk(fileId), SK: chunkSk(n) });

const BATCH_WRITE_MAX = 25;
const BATCH_GET_MAX = 100;
const RETRIES = 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const backoff = (attempt: number) => sleep(Math.min(2000, 25 * 2 ** attempt) * (0.5 + Math.random() / 2));

function toChunk(item: Record<string, unknown>): ChunkItem {
  const { PK: _pk, SK: _sk, ...rest } = item;
  return rest as unknown as ChunkItem;
}

/** Runs `fn` over `items` with at most `limit` running at once. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export class ChunkRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly concurrency = 8,
  ) {}

  /** Writes requests in batches of 25, in parallel, retrying unprocessed items with backoff. */
  private async batchWrite(requests: Record<string, unknown>[]): Promise<void> {
    const batches: Record<string, unknown>[][] = [];
    for (let i = 0; i < requests.length; i += BATCH_WRITE_MAX) batches.push(requests.slice(i, i + BATCH_WRITE_MAX));
    await mapLimit(batches, this.concurrency, async (batch) => {
      let pending = batch;
      for (let attempt = 0; pending.length; attempt++) {
        if (attempt > RETRIES) throw new Error(`DynamoDB left ${pending.length} writes unprocessed`);
        if (attempt > 0) await backoff(attempt);
        const out = await this.db.send(new BatchWriteCommand({ RequestItems: { [this.table]: pending as never } }));
        pending = (out.UnprocessedItems?.[this.table] as Record<string, unknown>[] | undefined) ?? [];
      }
    });
  }

  async putMany(chunks: ChunkItem[]): Promise<void> {
    await this.batchWrite(chunks.map((c) => ({ PutRequest: { Item: { ...chunkKey(c.fileId, c.n), ...c } } })));
  }

  /** The chunks of a file with these numbers (missing ones left out). */
  async getMany(fileId: string, ns: number[]): Promise<ChunkItem[]> {
    return this.getByKeys(ns.map((n) => ({ fileId, n })));
  }

  async getByKeys(keys: { fileId: string; n: number }[]): Promise<ChunkItem[]> {
    const out: ChunkItem[] = [];
    for (let i = 0; i < keys.length; i += BATCH_GET_MAX) {
      let pending: Record<string, unknown>[] = keys.slice(i, i + BATCH_GET_MAX).map((k) => chunkKey(k.fileId, k.n));
      for (let attempt = 0; pending.length; attempt++) {
        if (attempt > RETRIES) throw new Error('DynamoDB left chunk reads unprocessed');
        if (attempt > 0) await backoff(attempt);
        const res = await this.db.send(new BatchGetCommand({ RequestItems: { [this.table]: { Keys: pending } } }));
        out.push(...(res.Responses?.[this.table] ?? []).map(toChunk));
        pending = (res.UnprocessedKeys?.[this.table]?.Keys as Record<string, unknown>[] | undefined) ?? [];
      }
    }
    return out;
  }

  /** Every chunk of a file, page by page of the query (for copying a file's embeddings). */
  async *list(fileId: string): AsyncGenerator<ChunkItem[]> {
    let start: Record<string, unknown> | undefined;
    do {
      const res = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'PK = :pk AND begins_with(SK, :chunk)',
          ExpressionAttributeValues: { ':pk': chunkPk(fileId), ':chunk': 'CHUNK#' },
          ExclusiveStartKey: start,
        }),
      );
      yield (res.Items ?? []).map(toChunk);
      start = res.LastEvaluatedKey;
    } while (start);
  }

  /** Deletes the file's chunks numbered `from` and up (all of them by default); how many. */
  async deleteFrom(fileId: string, from = 0): Promise<number> {
    let deleted = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const res = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
          ExpressionAttributeValues: { ':pk': chunkPk(fileId), ':from': chunkSk(from), ':to': 'CHUNK#~' },
          ProjectionExpression: 'PK, SK',
          ExclusiveStartKey: start,
        }),
      );
      const keys = res.Items ?? [];
      await this.batchWrite(keys.map((k) => ({ DeleteRequest: { Key: { PK: k.PK, SK: k.SK } } })));
      deleted += keys.length;
      start = res.LastEvaluatedKey;
    } while (start);
    return deleted;
  }
}
