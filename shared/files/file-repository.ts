import { DeleteCommand, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DocumentFormat } from '../readers/reader.ts';
import type { Failure } from './failures.ts';
import type { RunStage } from './stages.ts';
import {
  applyIf,
  batchGetAll,
  putNew,
  queryAll,
  Repository,
  updateExpression,
  updateIf,
  type Item,
  type Page,
} from '../dynamo.ts';
import { createdKeys } from '../created-index.ts';
import { userListKeys, userListPage } from '../user-index.ts';

// File records (docs/ARCHITECTURE.md, Access patterns): FILE#<id> / META, listed in the owner's
// GSI1 partition (shared/user-index.ts). GSI2 is sparse and holds one of two things at a time:
//   PDF_INGESTING / <startedAt>#<id>                 while processing (restart recovery finds them)
//   FILEHASH#<userId>#<sha256> / <model>#<chunker>#… once completed (same bytes → reuse)
// Every pipeline write is conditional on the run id (`runId`): a forced re-ingestion starts a
// new run, and messages of the superseded run then change nothing.

export type FileStatus = FileRecord['status'];

/** What every file record holds, whatever its status. */
interface FileBase {
  id: string;
  userId: string;
  fileName: string;
  contentType: string;
  /** Size declared at upload, then the downloaded size. */
  size: number;
  /** Bytes charged to the owner's storage quota at upload (storage-quota.ts); absent before the quota. */
  quotaBytes?: number;
  /** Bytes counted in the owner's usage at upload (shared/limits/usage-ledger.ts); absent: not counted. */
  usageBytes?: number;
  /** The uploaded object (POST /upload). */
  s3Key: string;
  /** The S3 multipart upload still open for the object (POST /upload/multipart until its completion). */
  multipartUploadId?: string;
  /** Chats this file is attached to. */
  chatIds?: string[];
  /** Collections this file is in (shared/collections/). */
  collectionIds?: string[];
  createdAt: string;
  updatedAt: string;
}

/** An ingestion run (POST /message/pdf); stale messages carry another run id. */
export interface Run {
  runId: string;
  sourceUrl: string;
  /** The run was forced (force: true): it never reuses earlier embeddings. */
  forced: boolean;
  startedAt: string;
  /** Set while the run waits in its owner's ingestion queue (nothing of it is in the pipeline yet). */
  queuedAt?: string;
}

/** What a run records as it goes, each field written by the stage that learns it (kept when the run ends). */
export interface RunProgress {
  /** The document's format, read from its bytes (the fetch stage knows a PDF; the reader, the others). */
  format?: DocumentFormat;
  // pdf-fetch
  sha256?: string;
  fetchedAt?: string;
  // pdf-extract: pages read so far of the document's total, then what the text layers gave
  pagesDone?: number;
  pagesTotal?: number;
  pages?: number;
  /** Pages whose text layer was usable. */
  textPages?: number;
  /** Pages left without usable text: unusable text layer that OCR could not read, OCR off or over OCR_MAX_PAGES, or damaged. */
  unreadablePages?: number;
  /** Some page had a text layer that was not usable (decides UNREADABLE_TEXT over NO_TEXT_LAYER). */
  garbledPages?: number;
  /** Chunks and parts pdf-extract made from text layers (OCR chunks and parts are numbered after them). */
  extractChunks?: number;
  extractParts?: number;
  /** A document read in ranges of pages (PDF_EXTRACT_PAGES_PER_RANGE): their count, and those read (each once). */
  extractRangesTotal?: number;
  extractRangesDone?: number;
  doneExtractRanges?: Set<number>;
  /** The range length the ranges were planned with (page-ranges.ts), so that any reader can plan them again. */
  extractRangePages?: number;
  extractedAt?: string;
  // pdf-ocr: its ranges (messages) and how many are done, the pages to recognise and recognised
  // so far (live progress), then the pages it read
  ocrRangesTotal?: number;
  ocrRangesDone?: number;
  /** The ranges counted (each once). */
  doneOcrRanges?: Set<number>;
  ocrPagesTotal?: number;
  ocrPagesDone?: number;
  ocrPages?: number;
  // pdf-embed
  chunks?: number;
  partsTotal?: number;
  partsDone?: number;
  /** The parts counted (each once). */
  doneParts?: Set<number>;
  tokens?: number;
  model?: string;
  dimensions?: number;
  reusedFrom?: string;
  /** The earlier file of the same bytes and chunker whose chunks this run took instead of extracting (and recognising) again. */
  extractedFrom?: string;
  /** Chunker identity (version, encoding, sizes): embeddings are reusable only under the same one. */
  chunker?: string;
  /** The packed vectors of the last completed run (S3); a forced run replaces them when it completes. */
  vectorsKey?: string;
}

/** Uploaded (POST /upload), never ingested. */
interface UploadedFile extends FileBase {
  status: 'uploaded';
}

export interface ProcessingFile extends FileBase, Run, RunProgress {
  status: 'processing';
  stage: RunStage;
}

export interface CompletedFile extends FileBase, Run, RunProgress {
  status: 'completed';
  stage: 'done';
  model: string;
  dimensions: number;
  chunker: string;
  vectorsKey: string;
  completedAt: string;
}

/** A run that failed (with its typed reason), or a file being deleted (its run retired). */
export interface FailedFile extends FileBase, Partial<Run>, RunProgress {
  status: 'failed';
  stage?: RunStage | 'done';
  failure?: Failure;
  failedAt?: string;
  completedAt?: string;
}

export type FileRecord = UploadedFile | ProcessingFile | CompletedFile | FailedFile;

const INGESTING = 'PDF_INGESTING';
/** DELETE /upload ends the file's run by giving it a run id with this prefix (see `retire`). */
const RETIRED_RUN_PREFIX = 'deleted-';
/** True when the file is gone or being deleted: no stage may leave anything of it behind. */
export const isDeletedFile = (record: FileRecord | undefined): boolean =>
  !record || (record.status === 'failed' && (record.runId?.startsWith(RETIRED_RUN_PREFIX) ?? false));
const fileKey = (id: string) => ({ PK: `FILE#${id}`, SK: 'META' });
const hashPk = (userId: string, sha256: string) => `FILEHASH#${userId}#${sha256}`;
const hashSkPrefix = (model: string, chunker: string) => `${model}#${chunker}#`;

/** Every field a record keeps (the item's other attributes are keys and the pipeline's counting sets). */
const FIELDS = [
  'id',
  'userId',
  'fileName',
  'contentType',
  'size',
  'quotaBytes',
  'usageBytes',
  's3Key',
  'multipartUploadId',
  'chatIds',
  'collectionIds',
  'createdAt',
  'updatedAt',
  'status',
  'stage',
  'runId',
  'sourceUrl',
  'forced',
  'startedAt',
  'queuedAt',
  'format',
  'sha256',
  'fetchedAt',
  'pagesDone',
  'pagesTotal',
  'pages',
  'textPages',
  'unreadablePages',
  'garbledPages',
  'extractChunks',
  'extractParts',
  'extractRangesTotal',
  'extractRangesDone',
  'doneExtractRanges',
  'extractRangePages',
  'extractedAt',
  'ocrRangesTotal',
  'ocrRangesDone',
  'doneOcrRanges',
  'ocrPagesTotal',
  'ocrPagesDone',
  'ocrPages',
  'chunks',
  'partsTotal',
  'partsDone',
  'doneParts',
  'tokens',
  'model',
  'dimensions',
  'reusedFrom',
  'extractedFrom',
  'chunker',
  'vectorsKey',
  'completedAt',
  'failure',
  'failedAt',
] as const satisfies readonly (keyof UploadedFile | keyof ProcessingFile | keyof CompletedFile | keyof FailedFile)[];

/** Progress fields a new run starts without (the previous run's vectors stay until it completes). */
const RUN_PROGRESS_RESET = [
  'failure',
  'failedAt',
  'partsTotal',
  'pages',
  'chunks',
  'fetchedAt',
  'extractedAt',
  'completedAt',
  'doneParts',
  'reusedFrom',
  'extractedFrom',
  'textPages',
  'ocrPages',
  'unreadablePages',
  'ocrRangesTotal',
  'ocrRangesDone',
  'ocrPagesTotal',
  'ocrPagesDone',
  'doneOcrRanges',
  'extractChunks',
  'extractParts',
  'extractRangesTotal',
  'extractRangesDone',
  'doneExtractRanges',
  'extractRangePages',
  'garbledPages',
  'pagesDone',
  'pagesTotal',
] as const;

/** An update's expression with its placeholders (updateExpression's, or written by hand). */
interface UpdateParts {
  UpdateExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues?: Item;
}

/**
 * An update of run `runId` while it is still processing: the condition every pipeline write
 * carries, and `also` (a further clause of the write's own).
 */
const whileRunning = (runId: string, u: UpdateParts, also?: string) => ({
  ...u,
  ConditionExpression: `#runId = :runId AND #status = :processing${also ? ` AND ${also}` : ''}`,
  ExpressionAttributeNames: { ...u.ExpressionAttributeNames, '#runId': 'runId', '#status': 'status' },
  ExpressionAttributeValues: { ...u.ExpressionAttributeValues, ':runId': runId, ':processing': 'processing' },
});

const toItem = (r: UploadedFile): Item => ({
  ...fileKey(r.id),
  ...userListKeys('FILE', r),
  ...createdKeys('FILE', r),
  ...r,
});

function fromItem(item: Item): FileRecord {
  const out: Item = {};
  for (const k of FIELDS) if (item[k] !== undefined) out[k] = item[k];
  if (item.chatIds instanceof Set) out.chatIds = [...item.chatIds].sort();
  if (item.collectionIds instanceof Set) out.collectionIds = [...item.collectionIds].sort();
  return out as unknown as FileRecord;
}

/** What pdf-extract learned of the document, and where the run goes next. */
type Extraction =
  | {
      next: 'embed';
      /** Set by the reader of a format other than PDF (the fetch stage records a PDF's). */
      format?: DocumentFormat;
      pages: number;
      textPages: number;
      unreadablePages: number;
      chunks: number;
      partsTotal: number;
      /** Chunks taken from an earlier file of the same bytes: its OCR pages and its id. */
      ocrPages?: number;
      extractedFrom?: string;
    }
  | {
      next: 'ocr';
      pages: number;
      textPages: number;
      unreadablePages: number;
      garbledPages: number;
      chunks: number;
      extractParts: number;
      ocrRangesTotal: number;
      ocrPagesTotal: number;
    };

/** Where each stage counts its ranges: their total, ranges done, pages done, the set of ranges counted. */
const RANGE_FIELDS = {
  extract: { total: 'extractRangesTotal', done: 'extractRangesDone', pages: 'pagesDone', ranges: 'doneExtractRanges' },
  ocr: { total: 'ocrRangesTotal', done: 'ocrRangesDone', pages: 'ocrPagesDone', ranges: 'doneOcrRanges' },
} as const satisfies Record<RangedStage, Record<string, keyof RunProgress>>;

/** The stages that split a run's pages into ranges, each counted once (markRangeDone). */
type RangedStage = 'extract' | 'ocr';

/**
 * True when run `runId` is still at `stage` and every one of its ranges there is counted: what is
 * left is the stage's finishing step (gathering the ranges' chunks, chunking the recognised text).
 */
export function everyRangeCounted(r: FileRecord | undefined, runId: string, stage: RangedStage): r is ProcessingFile {
  if (r?.status !== 'processing' || r.runId !== runId || r.stage !== stage) return false;
  const total = r[RANGE_FIELDS[stage].total];
  return total !== undefined && (r[RANGE_FIELDS[stage].done] ?? 0) >= total;
}

/** What pdf-ocr added once its last range is done: the run goes on to embedding. */
interface OcrOutcome {
  ocrPages: number;
  unreadablePages: number;
  chunks: number;
  partsTotal: number;
}

export class FileRepository extends Repository {
  /** Changes a processing record of the given run; undefined when the run is no longer current. */
  private async updateRun(
    id: string,
    runId: string,
    set: Partial<ProcessingFile>,
  ): Promise<ProcessingFile | undefined> {
    const updated = await updateIf(this.db, {
      TableName: this.table,
      Key: fileKey(id),
      ...whileRunning(runId, updateExpression(set)),
    });
    return updated && (fromItem(updated) as ProcessingFile);
  }

  async create(record: UploadedFile): Promise<void> {
    await putNew(this.db, { TableName: this.table, Item: toItem(record) });
  }

  async get(id: string): Promise<FileRecord | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.table, Key: fileKey(id), ConsistentRead: true }),
    );
    return Item && fromItem(Item);
  }

  /** One page of the user's files, newest first (GET /upload). The cursor is checked to be this user's. */
  listByUser(userId: string, options: { limit: number; cursor?: string }): Promise<Page<FileRecord>> {
    return userListPage(this.db, this.table, userId, 'FILE', options, fromItem);
  }

  /** Several records at once (retrieval); missing ids are left out. */
  async getMany(ids: string[]): Promise<FileRecord[]> {
    return (await batchGetAll(this.db, this.table, ids.map(fileKey))).map(fromItem);
  }

  /**
   * Which of these files are gone or being deleted (consistent reads, so a delete that has begun
   * is seen at once): what a share may no longer show of them.
   */
  async deletedAmong(ids: string[]): Promise<Set<string>> {
    const unique = [...new Set(ids)];
    const found = (await batchGetAll(this.db, this.table, unique.map(fileKey), { consistentRead: true })).map(fromItem);
    const kept = new Set(found.filter((r) => !isDeletedFile(r)).map((r) => r.id));
    return new Set(unique.filter((id) => !kept.has(id)));
  }

  /**
   * Starts an ingestion run: status processing, stage fetch, counters reset. Only from uploaded
   * or failed, or from any state with `force`. Undefined when the condition refused it (a run is
   * going or done, or the file is not the user's).
   */
  async startRun(p: {
    id: string;
    userId: string;
    runId: string;
    url: string;
    force: boolean;
    now: string;
    /** The run waits in the owner's ingestion queue (queuedAt) until `leaveQueue`. */
    queued?: boolean;
  }): Promise<ProcessingFile | undefined> {
    const u = updateExpression(
      {
        status: 'processing',
        stage: 'fetch',
        queuedAt: p.queued ? p.now : undefined,
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
      RUN_PROGRESS_RESET,
    );
    // A file being deleted (its run retired) never starts again.
    const live = '(attribute_not_exists(#runId) OR NOT begins_with(#runId, :retired))';
    const started = await updateIf(this.db, {
      TableName: this.table,
      Key: fileKey(p.id),
      ...u,
      ConditionExpression: p.force
        ? `attribute_exists(PK) AND userId = :user AND ${live}`
        : `attribute_exists(PK) AND userId = :user AND ${live} AND (#status = :uploaded OR #status = :failed)`,
      ExpressionAttributeValues: {
        ...u.ExpressionAttributeValues,
        ':user': p.userId,
        ':retired': RETIRED_RUN_PREFIX,
        ...(!p.force && { ':uploaded': 'uploaded', ':failed': 'failed' }),
      },
    });
    return started && (fromItem(started) as ProcessingFile);
  }

  /**
   * A queued run leaves the queue for the pipeline (its fetch is sent next); undefined when it is
   * no longer the file's current run, or no longer queued (another releaser took it).
   */
  leaveQueue(id: string, runId: string, now: string): Promise<ProcessingFile | undefined> {
    return updateIf(this.db, {
      TableName: this.table,
      Key: fileKey(id),
      ...whileRunning(runId, updateExpression({ updatedAt: now }, ['queuedAt']), 'attribute_exists(#queuedAt)'),
    }).then((updated) => updated && (fromItem(updated) as ProcessingFile));
  }

  /** pdf-fetch stored the document: its hash and size; the run goes on to extraction. */
  recordDownload(
    id: string,
    runId: string,
    d: { sha256: string; size: number; format?: DocumentFormat },
    now: string,
  ): Promise<ProcessingFile | undefined> {
    return this.updateRun(id, runId, {
      stage: 'extract',
      sha256: d.sha256,
      size: d.size,
      ...(d.format && { format: d.format }),
      fetchedAt: now,
      updatedAt: now,
    });
  }

  /** Extraction progress for GET /message/pdf/{fileId}: the page count once, then pages done. */
  recordPageProgress(
    id: string,
    runId: string,
    p: { pagesTotal?: number; pagesDone: number },
    now: string,
  ): Promise<ProcessingFile | undefined> {
    return this.updateRun(id, runId, { ...p, updatedAt: now });
  }

  /**
   * pdf-extract found a document to read in ranges: their count and its pages. The counts of ranges
   * and pages done are left alone (markRangeDone adds to them): a redelivered first message must
   * not take back ranges already counted.
   */
  recordExtractRanges(
    id: string,
    runId: string,
    r: { rangesTotal: number; rangePages: number; pagesTotal: number },
    now: string,
  ): Promise<ProcessingFile | undefined> {
    return this.updateRun(id, runId, {
      extractRangesTotal: r.rangesTotal,
      extractRangePages: r.rangePages,
      pagesTotal: r.pagesTotal,
      updatedAt: now,
    });
  }

  /** pdf-extract read the document: what its text layers gave, and the stage the run goes to. */
  recordExtraction(
    id: string,
    runId: string,
    { next, ...e }: Extraction,
    now: string,
  ): Promise<ProcessingFile | undefined> {
    const read = { pagesDone: e.pages, pagesTotal: e.pages, extractedAt: now, updatedAt: now };
    return this.updateRun(
      id,
      runId,
      // OCR's chunks and parts are numbered after the text layers' (extractChunks, extractParts).
      next === 'embed'
        ? { stage: 'embed', ocrPages: 0, ...e, ...read }
        : { stage: 'ocr', ...e, extractChunks: e.chunks, ocrRangesDone: 0, ocrPagesDone: 0, ...read },
    );
  }

  /** The last OCR range is done: the pages it read, and the run goes on to embedding. */
  recordOcr(id: string, runId: string, o: OcrOutcome, now: string): Promise<ProcessingFile | undefined> {
    return this.updateRun(id, runId, { stage: 'embed', ...o, updatedAt: now });
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
  ): Promise<ProcessingFile | undefined> {
    const updated = await updateIf(this.db, {
      TableName: this.table,
      Key: fileKey(id),
      ...whileRunning(
        runId,
        {
          UpdateExpression: `ADD #partsDone :one, #tokens :tokens, #doneParts :part SET #updatedAt = :now, #model = :model, #dims = :dims${
            embedding.reusedFrom ? ', #reusedFrom = :reusedFrom' : ''
          }`,
          ExpressionAttributeNames: {
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
            ':model': embedding.model,
            ':dims': embedding.dimensions,
            ...(embedding.reusedFrom && { ':reusedFrom': embedding.reusedFrom }),
          },
        },
        'NOT contains(#doneParts, :n)',
      ),
    });
    return updated && (fromItem(updated) as ProcessingFile);
  }

  /**
   * Counts one range of pdf-extract's or pdf-ocr's and its pages, once (like markPartDone: a set
   * of range numbers, refused when the range is in it). Undefined when refused (counted before,
   * or the run is no longer current).
   */
  async markRangeDone(
    id: string,
    runId: string,
    { stage, range, pages }: { stage: RangedStage; range: number; pages: number },
    now: string,
  ): Promise<ProcessingFile | undefined> {
    const fields = RANGE_FIELDS[stage];
    const updated = await updateIf(this.db, {
      TableName: this.table,
      Key: fileKey(id),
      ...whileRunning(
        runId,
        {
          UpdateExpression: 'ADD #done :one, #pages :pages, #ranges :range SET #updatedAt = :now',
          ExpressionAttributeNames: {
            '#done': fields.done,
            '#pages': fields.pages,
            '#ranges': fields.ranges,
            '#updatedAt': 'updatedAt',
          },
          ExpressionAttributeValues: {
            ':one': 1,
            ':pages': pages,
            ':range': new Set([range]),
            ':n': range,
            ':now': now,
          },
        },
        'NOT contains(#ranges, :n)',
      ),
    });
    return updated && (fromItem(updated) as ProcessingFile);
  }

  /** Completes the run; the record as it was before (its old vectors key) or undefined when refused. */
  async complete(
    record: ProcessingFile,
    runId: string,
    p: {
      model: string;
      dimensions: number;
      chunker: string;
      sha256: string;
      vectorsKey: string;
      now: string;
      tokens?: number;
    },
  ): Promise<ProcessingFile | undefined> {
    const u = updateExpression({
      status: 'completed',
      stage: 'done',
      model: p.model,
      dimensions: p.dimensions,
      chunker: p.chunker,
      vectorsKey: p.vectorsKey,
      completedAt: p.now,
      updatedAt: p.now,
      ...(p.tokens !== undefined && { tokens: p.tokens }),
      GSI2PK: hashPk(record.userId, p.sha256),
      GSI2SK: `${hashSkPrefix(p.model, p.chunker)}${p.now}#${record.id}`,
    });
    const before = await updateIf(this.db, {
      TableName: this.table,
      Key: fileKey(record.id),
      ...whileRunning(runId, u),
      ReturnValues: 'ALL_OLD',
    });
    return before && (fromItem(before) as ProcessingFile);
  }

  /** Fails the run with a typed reason; false when the run is no longer current. */
  async fail(id: string, runId: string, failure: Failure, now: string): Promise<boolean> {
    return applyIf(this.db, {
      TableName: this.table,
      Key: fileKey(id),
      ...whileRunning(
        runId,
        updateExpression({ status: 'failed', failure, failedAt: now, updatedAt: now }, ['GSI2PK', 'GSI2SK']),
      ),
    });
  }

  /** The multipart upload `uploadId` was completed: the record forgets it. False when it was not the open one. */
  endMultipart(id: string, uploadId: string): Promise<boolean> {
    return applyIf(this.db, {
      TableName: this.table,
      Key: fileKey(id),
      UpdateExpression: 'REMOVE #upload',
      ConditionExpression: '#upload = :upload',
      ExpressionAttributeNames: { '#upload': 'multipartUploadId' },
      ExpressionAttributeValues: { ':upload': uploadId },
    });
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

  /** Notes that the file is in a collection; false when the record is gone. */
  addCollection(id: string, collectionId: string): Promise<boolean> {
    return applyIf(this.db, {
      TableName: this.table,
      Key: fileKey(id),
      UpdateExpression: 'ADD #collectionIds :collection',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeNames: { '#collectionIds': 'collectionIds' },
      ExpressionAttributeValues: { ':collection': new Set([collectionId]) },
    });
  }

  /** Notes that the file left a collection (a record already gone has nothing to note). */
  async removeCollection(id: string, collectionId: string): Promise<void> {
    await applyIf(this.db, {
      TableName: this.table,
      Key: fileKey(id),
      UpdateExpression: 'DELETE #collectionIds :collection',
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeNames: { '#collectionIds': 'collectionIds' },
      ExpressionAttributeValues: { ':collection': new Set([collectionId]) },
    });
  }

  /** Ends any run before the file is deleted: messages still in flight then change nothing. */
  async retire(id: string, now: string): Promise<void> {
    // A record that is already gone has nothing to retire.
    await applyIf(this.db, {
      TableName: this.table,
      Key: fileKey(id),
      ...updateExpression({ status: 'failed', runId: `${RETIRED_RUN_PREFIX}${now}`, updatedAt: now }, [
        'GSI2PK',
        'GSI2SK',
      ]),
      ConditionExpression: 'attribute_exists(PK)',
    });
  }

  /** Deletes the record; false when it was already gone (another attempt deleted it). */
  async delete(id: string): Promise<boolean> {
    const out = await this.db.send(
      new DeleteCommand({ TableName: this.table, Key: fileKey(id), ReturnValues: 'ALL_OLD' }),
    );
    return out.Attributes !== undefined;
  }

  /** Every record in processing (restart recovery). */
  listProcessing(): Promise<FileRecord[]> {
    return queryAll(
      this.db,
      {
        TableName: this.table,
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk',
        ExpressionAttributeValues: { ':pk': INGESTING },
      },
      fromItem,
    );
  }

  /**
   * A completed file of the user with the same bytes and chunker, whatever its embedding model:
   * its chunks are what extracting (and recognising) these bytes again would give.
   */
  async findExtracted(userId: string, sha256: string, chunker: string, exceptId: string) {
    const res = await this.db.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk',
        ExpressionAttributeValues: { ':pk': hashPk(userId, sha256) },
        ScanIndexForward: false,
        Limit: 20,
      }),
    );
    return (res.Items ?? [])
      .map(fromItem)
      .find(
        (f): f is CompletedFile =>
          f.id !== exceptId && f.status === 'completed' && f.userId === userId && f.chunker === chunker,
      );
  }

  /** A completed file of the user with the same bytes, embedding model and chunker. */
  async findReusable(
    userId: string,
    sha256: string,
    model: string,
    chunker: string,
    exceptId: string,
  ): Promise<CompletedFile | undefined> {
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
      .map(fromItem)
      .find(
        (f): f is CompletedFile =>
          f.id !== exceptId && f.status === 'completed' && f.userId === userId && !!f.vectorsKey,
      );
  }
}
