import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchGetAll, batchWriteAll, type WriteRequest } from '../dynamo.ts';

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
  /** Pages of the chunk whose text was recognised by OCR. */
  ocrPages?: number[];
  /** float32, little-endian. */
  embedding: Uint8Array;
}

const chunkPk = (fileId: string) => `FILE#${fileId}`;
const chunkSk = (n: number) => `CHUNK#${String(n).padStart(CHUNK_DIGITS, '0')}`;
const chunkKey = (fileId: string, n: number) => ({ PK: chunkPk(fileId), SK: chunkSk(n) });

function toChunk(item: Record<string, unknown>): ChunkItem {
  const { PK: _pk, SK: _sk, ...rest } = item;
  return rest as unknown as ChunkItem;
}

export class ChunkRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly concurrency = 8,
  ) {}

  private batchWrite(requests: WriteRequest[]): Promise<void> {
    return batchWriteAll(this.db, this.table, requests, this.concurrency);
  }

  async putMany(chunks: ChunkItem[]): Promise<void> {
    await this.batchWrite(chunks.map((c) => ({ PutRequest: { Item: { ...chunkKey(c.fileId, c.n), ...c } } })));
  }

  /** The chunks of a file with these numbers (missing ones left out). */
  async getMany(fileId: string, ns: number[]): Promise<ChunkItem[]> {
    return this.getByKeys(ns.map((n) => ({ fileId, n })));
  }

  async getByKeys(keys: { fileId: string; n: number }[]): Promise<ChunkItem[]> {
    const items = await batchGetAll(this.db, this.table, keys.map((k) => chunkKey(k.fileId, k.n)));
    return items.map(toChunk);
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
