import { applyIf, Repository, updateExpression, updateIf, type Item } from '../dynamo.ts';
import type { DocumentFormat } from '../readers/reader.ts';
import type { Failure } from './failures.ts';
import { fileKey, fromItem, hashPk, hashSkPrefix, INGESTING, RUN_PROGRESS_RESET } from './file-item.ts';
import {
  RETIRED_RUN_PREFIX,
  type Extraction,
  type FileRecord,
  type OcrOutcome,
  type ProcessingFile,
  type RunProgress,
} from './file-record.ts';

// An ingestion run's writes to its file's record, stage by stage (FileRepository has the rest).
// Every pipeline write is conditional on the run id (`runId`): a forced re-ingestion starts a
// new run, and messages of the superseded run then change nothing.

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

/** The writes of a file's ingestion runs; FileRepository is the whole record's repository. */
export abstract class FileRuns extends Repository {
  /** Changes a processing record of the given run; undefined when the run is no longer current. */
  private updateRun(id: string, runId: string, set: Partial<ProcessingFile>): Promise<ProcessingFile | undefined> {
    return this.writeRun(id, runId, updateExpression(set));
  }

  /** Writes `u` to run `runId` while it is processing (and `also` holds); undefined when refused. */
  private async writeRun(id: string, runId: string, u: UpdateParts, also?: string) {
    const updated = await updateIf(this.db, {
      TableName: this.table,
      Key: fileKey(id),
      ...whileRunning(runId, u, also),
    });
    return updated && (fromItem(updated) as ProcessingFile);
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
    return this.writeRun(id, runId, updateExpression({ updatedAt: now }, ['queuedAt']), 'attribute_exists(#queuedAt)');
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
  markPartDone(
    id: string,
    runId: string,
    part: number,
    tokens: number,
    now: string,
    embedding: { model: string; dimensions: number; reusedFrom?: string },
  ): Promise<ProcessingFile | undefined> {
    return this.writeRun(
      id,
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
    );
  }

  /**
   * Counts one range of pdf-extract's or pdf-ocr's and its pages, once (like markPartDone: a set
   * of range numbers, refused when the range is in it). Undefined when refused (counted before,
   * or the run is no longer current).
   */
  markRangeDone(
    id: string,
    runId: string,
    { stage, range, pages }: { stage: RangedStage; range: number; pages: number },
    now: string,
  ): Promise<ProcessingFile | undefined> {
    const fields = RANGE_FIELDS[stage];
    return this.writeRun(
      id,
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
    );
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
}
