import {
  DeleteCommand,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
  type DynamoDBDocumentClient,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import type { Failure } from '../pdf/failures.ts';
import { batchGetAll, isConditionFailure } from '../dynamo.ts';
import { decodeCursor, invalidCursor, queryPage, type Key } from '../http/pagination.ts';

// File records (DESIGN §5): FILE#<id> / META, listed per owner through GSI1 (USER#<userId> /
// FILE#<createdAt>#<id>). GSI2 is sparse and holds one of two things at a time:
//   PDF_INGESTING / <startedAt>#<id>                 while processing (restart recovery finds them)
//   FILEHASH#<userId>#<sha256> / <model>#<chunker>#… once completed (same bytes → reuse)
// Every pipeline write is conditional on the run id (`runId`): a forced re-ingestion starts a
// new run, and messages of the superseded run then change nothing.

export type FileStatus = 'uploaded' | 'processing' | 'completed' | 'failed';
export type Stage = 'fetch' | 'extract' | 'ocr' | 'embed' | 'done';

export interface FileRecord {
  id: string;
  userId: string;
  fileName: string;
  contentType: string;
  /** Size declared at upload, then the downloaded size. */
  size: number;
  /** The uploaded object (POST /upload). */
  s3Key: string;
  status: FileStatus;
  stage?: Stage;
  /** The current ingestion run; stale messages carry another one. */
  runId?: string;
  sourceUrl?: string;
  /** The run was forced (force: true): it never reuses earlier embeddings. */
  forced?: boolean;
  sha256?: string;
  pages?: number;
  /** Extraction progress: pages read so far of the document's total. */
  pagesDone?: number;
  pagesTotal?: number;
  /** Pages whose text layer was usable. */
  textPages?: number;
  /** Pages read by OCR (counted when OCR finishes). */
  ocrPages?: number;
  /** Pages left without usable text: unusable text layer that OCR could not read, OCR off or over OCR_MAX_PAGES, or damaged. */
  unreadablePages?: number;
  /** OCR ranges (pdf-ocr messages) of the run, and how many are done. */
  ocrRangesTotal?: number;
  ocrRangesDone?: number;
  /** Chunks and parts pdf-extract made from text layers (OCR chunks and parts are numbered after them). */
  extractChunks?: number;
  extractParts?: number;
  /** Some page had a text layer that was not usable (decides UNREADABLE_TEXT over NO_TEXT_LAYER). */
  garbledPages?: number;
  chunks?: number;
  partsTotal?: number;
  partsDone?: number;
  model?: string;
  dimensions?: number;
  tokens?: number;
  /** Chunker identity (version, encoding, sizes): embeddings are reusable only under the same one. */
  chunker?: string;
  /** The packed vectors of the completed run (S3). */
  vectorsKey?: string;
  /** Chats this file is attached to. */
  chatIds?: string[];
  reusedFrom?: string;
  failure?: Failure;
  startedAt?: string;
  fetchedAt?: string;
  extractedAt?: string;
  completedAt?: string;
  failedAt?: string;
  createdAt: string;
  updatedAt: string;
}

export const INGESTING = 'PDF_INGESTING';
const fileKey = (id: string) => ({ PK: `FILE#${id}`, SK: 'META' });
const hashPk = (userId: string, sha256: string) => `FILEHASH#${userId}#${sha256}`;
const hashSkPrefix = (model: string, chunker: string) => `${model}#${chunker}#`;
const USER_LIST_KEYS = ['PK', 'SK', 'GSI1PK', 'GSI1SK'] as const;
const STORAGE = ['PK', 'SK', 'GSI1PK', 'GSI1SK', 'GSI2PK', 'GSI2SK', 'doneParts', 'doneOcrRanges'];

export function toFileRecord(item: Record<string, unknown>): FileRecord {
  const out: Record<string, unknown> = { ...item };
  for (const k of STORAGE) delete out[k];
  if (out.chatIds instanceof Set) out.chatIds = [...out.chatIds].sort();
  return out as unknown as FileRecord;
}

/** Builds `SET a = :a, ...` and `REMOVE ...` from a plain object (undefined values are removed). */
function updateParts(set: Record<string, unknown>, remove: string[] = []) {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  const removes: string[] = [];
  for (const [k, v] of Object.entries(set)) {
    names[`#${k}`] = k;
    if (v === undefined) removes.push(`#${k}`);
    else {
      values[`:${k}`] = v;
      sets.push(`#${k} = :${k}`);
    }
  }
  for (const k of remove) {
    names[`#${k}`] = k;
    removes.push(`#${k}`);
  }
  const expression = [sets.length ? `SET ${sets.join(', ')}` : '', removes.length ? `REMOVE ${removes.join(', ')}` : '']
    .filter(Boolean)
    .join(' ');
  return { expression, names, values };
}

export class FileRepository {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** A conditional update returning the record (new, or as it was), or undefined when the condition refused it. */
  private async updateIf(
    id: string,
    update: Pick<UpdateCommandInput, 'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'>,
    returnValues: 'ALL_NEW' | 'ALL_OLD' = 'ALL_NEW',
  ): Promise<FileRecord | undefined> {
    try {
      const out = await this.db.send(new UpdateCommand({ TableName: this.table, Key: fileKey(id), ...update, ReturnValues: returnValues }));
      return toFileRecord(out.Attributes!);
    } catch (err) {
      if (isConditionFailure(err)) return undefined;
      throw err;
    }
  }

  async create(record: FileRecord): Promise<void> {
    await this.db.send(
      new PutCommand({
        TableName: this.table,
        Item: { ...fileKey(record.id), GSI1PK: `USER#${record.userId}`, GSI1SK: `FILE#${record.createdAt}#${record.id}`, ...record },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
  }

  async get(id: string): Promise<FileRecord | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: fileKey(id), ConsistentRead: true }));
    return out.Item ? toFileRecord(out.Item) : undefined;
  }

  /** The record with its storage-only attributes (doneParts), for the pipeline. */
  async getRaw(id: string): Promise<(FileRecord & { doneParts?: Set<number>; doneOcrRanges?: Set<number> }) | undefined> {
    const out = await this.db.send(new GetCommand({ TableName: this.table, Key: fileKey(id), ConsistentRead: true }));
    if (!out.Item) return undefined;
    return {
      ...toFileRecord(out.Item),
      ...(out.Item.doneParts instanceof Set && { doneParts: out.Item.doneParts as Set<number> }),
      ...(out.Item.doneOcrRanges instanceof Set && { doneOcrRanges: out.Item.doneOcrRanges as Set<number> }),
    };
  }

  /** One page of the user's files, newest first (GET /upload). The cursor is checked to be this user's. */
  async listByUser(userId: string, options: { limit: number; cursor?: string }): Promise<{ items: FileRecord[]; lastKey?: Key }> {
    const pk = `USER#${userId}`;
    const start = decodeCursor(options.cursor, USER_LIST_KEYS, { GSI1PK: pk });
    if (start && !String(start.GSI1SK).startsWith('FILE#')) {
      throw invalidCursor();
    }
    const out = await queryPage(
      this.db,
      {
        TableName: this.table,
        IndexName: 'GSI1',
        KeyConditionExpression: 'GSI1PK = :pk AND begins_with(GSI1SK, :file)',
        ExpressionAttributeValues: { ':pk': pk, ':file': 'FILE#' },
        ScanIndexForward: false,
        ...(start && { ExclusiveStartKey: start }),
      },
      options.limit,
      USER_LIST_KEYS,
    );
    return { items: out.items.map(toFileRecord), ...(out.lastKey && { lastKey: out.lastKey }) };
  }

  /** Several records at once (retrieval); missing ids are left out. */
  async getMany(ids: string[]): Promise<FileRecord[]> {
    return (await batchGetAll(this.db, this.table, ids.map(fileKey))).map(toFileRecord);
  }

  /**
   * Starts an ingestion run: status processing, stage fetch, counters reset. Only from uploaded
   * or failed, or from any state with `force`. Undefined when the condition refused it (a run is
   * going or done, or the file is not the user's).
   */
  async startRun(p: { id: string; userId: string; runId: string; url: string; force: boolean; now: string }): Promise<FileRecord | undefined> {
    const u = updateParts(
      {
        status: 'processing',
        stage: 'fetch',
        runId: p.runId,
        sourceUrl: p.url,
        forced: p.force,
        partsDone: 0,
        tokens: 0,
        startedAt: p.now,
        updatedAt: p.now,
        GSI2PK: INGESTING,
        GSI2SK: `${p.now}#${p.id}`,
      },
      [
        'failure', 'failedAt', 'partsTotal', 'pages', 'chunks', 'fetchedAt', 'extractedAt', 'completedAt', 'doneParts', 'reusedFrom',
        'textPages', 'ocrPages', 'unreadablePages', 'ocrRangesTotal', 'ocrRangesDone', 'doneOcrRanges', 'extractChunks', 'extractParts', 'garbledPages', 'pagesDone', 'pagesTotal',
      ],
    );
    return this.updateIf(p.id, {
      UpdateExpression: u.expression,
      ConditionExpression: p.force
        ? 'attribute_exists(PK) AND userId = :user'
        : 'attribute_exists(PK) AND userId = :user AND (#status = :uploaded OR #status = :failed)',
      ExpressionAttributeNames: u.names,
      ExpressionAttributeValues: { ...u.values, ':user': p.userId, ...(!p.force && { ':uploaded': 'uploaded', ':failed': 'failed' }) },
    });
  }

  /** Updates a processing record of the given run; undefined when the run is no longer current. */
  async updateRun(id: string, runId: string, set: Record<string, unknown>, remove: string[] = []): Promise<FileRecord | undefined> {
    const u = updateParts({ ...set }, remove);
    return this.updateIf(id, {
      UpdateExpression: u.expression,
      ConditionExpression: '#runId = :runId AND #status = :processing',
      ExpressionAttributeNames: { ...u.names, '#runId': 'runId', '#status': 'status' },
      ExpressionAttributeValues: { ...u.values, ':runId': runId, ':processing': 'processing' },
    });
  }

  /**
   * Counts one embedded part, once: the part number goes into a set and the condition refuses a
   * part already in it, so a redelivered message never counts twice. Undefined when refused.
   */
  async markPartDone(
    id: string,
    runId: string,
    part: number,
    tokens: number,
    now: string,
    embedding: { model: string; dimensions: number; reusedFrom?: string },
  ): Promise<FileRecord | undefined> {
    return this.updateIf(id, {
      UpdateExpression: `ADD #partsDone :one, #tokens :tokens, #doneParts :part SET #updatedAt = :now, #model = :model, #dims = :dims${
        embedding.reusedFrom ? ', #reusedFrom = :reusedFrom' : ''
      }`,
      ConditionExpression: '#runId = :runId AND #status = :processing AND NOT contains(#doneParts, :n)',
      ExpressionAttributeNames: {
        '#status': 'status',
        '#runId': 'runId',
        '#partsDone': 'partsDone',
        '#tokens': 'tokens',
        '#doneParts': 'doneParts',
        '#updatedAt': 'updatedAt',
        '#model': 'model',
        '#dims': 'dimensions',
        ...(embedding.reusedFrom && { '#reusedFrom': 'reusedFrom' }),
      },
      ExpressionAttributeValues: {
        ':one': 1,
        ':tokens': tokens,
        ':part': new Set([part]),
        ':n': part,
        ':now': now,
        ':runId': runId,
        ':processing': 'processing',
        ':model': embedding.model,
        ':dims': embedding.dimensions,
        ...(embedding.reusedFrom && { ':reusedFrom': embedding.reusedFrom }),
      },
    });
  }

  /**
   * Counts one OCR range, once (like markPartDone: a set of range numbers, refused when the range
   * is in it). Undefined when refused (counted before, or the run is no longer current).
   */
  async markOcrRangeDone(id: string, runId: string, range: number, now: string): Promise<(FileRecord & { doneOcrRanges?: Set<number> }) | undefined> {
    return this.updateIf(id, {
      UpdateExpression: 'ADD #done :one, #ranges :range SET #updatedAt = :now',
      ConditionExpression: '#runId = :runId AND #status = :processing AND NOT contains(#ranges, :n)',
      ExpressionAttributeNames: { '#status': 'status', '#runId': 'runId', '#done': 'ocrRangesDone', '#ranges': 'doneOcrRanges', '#updatedAt': 'updatedAt' },
      ExpressionAttributeValues: { ':one': 1, ':range': new Set([range]), ':n': range, ':now': now, ':runId': runId, ':processing': 'processing' },
    });
  }

  /** Completes the run; the record as it was before (its old vectors key) or undefined when refused. */
  async complete(
    record: FileRecord,
    runId: string,
    p: { model: string; dimensions: number; chunker: string; sha256: string; vectorsKey: string; now: string; tokens?: number; extra?: Record<string, unknown> },
  ): Promise<FileRecord | undefined> {
    const u = updateParts({
      status: 'completed',
      stage: 'done',
      model: p.model,
      dimensions: p.dimensions,
      chunker: p.chunker,
      vectorsKey: p.vectorsKey,
      completedAt: p.now,
      updatedAt: p.now,
      ...(p.tokens !== undefined && { tokens: p.tokens }),
      ...p.extra,
      GSI2PK: hashPk(record.userId, p.sha256),
      GSI2SK: `${hashSkPrefix(p.model, p.chunker)}${p.now}#${record.id}`,
    });
    return this.updateIf(
      record.id,
      {
        UpdateExpression: u.expression,
        ConditionExpression: '#runId = :runId AND #status = :processing',
        ExpressionAttributeNames: { ...u.names, '#runId': 'runId', '#status': 'status' },
        ExpressionAttributeValues: { ...u.values, ':runId': runId, ':processing': 'processing' },
      },
      'ALL_OLD',
    );
  }

  /** Fails the run with a typed reason; false when the run is no longer current. */
  async fail(id: string, runId: string, failure: Failure, now: string): Promise<boolean> {
    const u = updateParts({ status: 'failed', failure, failedAt: now, updatedAt: now }, ['GSI2PK', 'GSI2SK']);
    const failed = await this.updateIf(id, {
      UpdateExpression: u.expression,
      ConditionExpression: '#runId = :runId AND #status = :processing',
      ExpressionAttributeNames: { ...u.names, '#runId': 'runId' },
      ExpressionAttributeValues: { ...u.values, ':runId': runId, ':processing': 'processing' },
    });
    return failed !== undefined;
  }

  /** Remembers a chat the file is attached to (so deleting the file can detach it). */
  async addChat(id: string, chatId: string): Promise<void> {
    await this.db.send(
      new UpdateCommand({
        TableName: this.table,
        Key: fileKey(id),
        UpdateExpression: 'ADD #chatIds :chat',
        ExpressionAttributeNames: { '#chatIds': 'chatIds' },
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':chat': new Set([chatId]) },
      }),
    );
  }

  /** Ends any run before the file is deleted: messages still in flight then change nothing. */
  async retire(id: string, now: string): Promise<void> {
    const u = updateParts({ status: 'failed', runId: `deleted-${now}`, updatedAt: now }, ['GSI2PK', 'GSI2SK']);
    // A record that is already gone has nothing to retire.
    await this.updateIf(id, {
      UpdateExpression: u.expression,
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeNames: u.names,
      ExpressionAttributeValues: u.values,
    });
  }

  async delete(id: string): Promise<void> {
    await this.db.send(new DeleteCommand({ TableName: this.table, Key: fileKey(id) }));
  }

  /** Every record in processing (restart recovery). */
  async listProcessing(): Promise<FileRecord[]> {
    const out: FileRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const res = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: 'GSI2',
          KeyConditionExpression: 'GSI2PK = :pk',
          ExpressionAttributeValues: { ':pk': INGESTING },
          ExclusiveStartKey: start,
        }),
      );
      out.push(...(res.Items ?? []).map(toFileRecord));
      start = res.LastEvaluatedKey;
    } while (start);
    return out;
  }

  /** A completed file of the user with the same bytes, embedding model and chunker. */
  async findReusable(userId: string, sha256: string, model: string, chunker: string, exceptId: string): Promise<FileRecord | undefined> {
    const res = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk AND begins_with(GSI2SK, :prefix)',
        ExpressionAttributeValues: { ':pk': hashPk(userId, sha256), ':prefix': hashSkPrefix(model, chunker) },
        ScanIndexForward: false,
        Limit: 10,
      }),
    );
    return (res.Items ?? [])
      .map(toFileRecord)
      .find((f) => f.id !== exceptId && f.status === 'completed' && f.userId === userId && f.vectorsKey);
  }
}
