import type { Clock } from '../clock.ts';
import type { FileRepository } from '../files/file-repository.ts';
import { logger } from '../observability/logger.ts';
import { metrics } from '../observability/metrics.ts';
import type { PipelineStageName } from '../files/stages.ts';
import { embedMessageSchema, extractMessageSchema, fetchMessageSchema, ocrMessageSchema } from './queue-messages.ts';
import { isoNow } from '../clock.ts';
import { releaseAfterRunEnded, type ReleaseWaiting } from './ingest-queue.ts';
import type { ServiceEvents } from '../events/service-events.ts';

// What the pipeline's dead-letter consumer does with a message that failed on every attempt:
// a stage that dies — out of memory, timeout, a crash — runs none of its own code to
// record the failure, so its file would stay `processing` for ever. The consumer records it:
// the run is marked failed with PROCESSING_FAILED and the stage. Fenced like every pipeline
// write: only the message's own run, only while it is processing, and only while the run is at
// the message's stage (a duplicate of a stage the run has already passed changes nothing).

export interface DeadLetterDeps {
  files: FileRepository;
  clock: Clock;
  /** The owner's waiting runs get the failed run's slot (docs/DECISIONS.md "Fair bulk ingestion"). */
  releaseWaiting?: ReleaseWaiting;
  /** The owner's webhooks hear of the failure (file.failed); absent: nothing is told. */
  events?: ServiceEvents;
}

/** The stage a dead message belongs to, from its body (each stage's body has its own shape). */
function deadLetterOf(body: unknown): { stage: PipelineStageName; fileId: string; runId: string } | undefined {
  const embed = embedMessageSchema.safeParse(body);
  if (embed.success) return { stage: 'pdf-embed', fileId: embed.data.fileId, runId: embed.data.runId };
  const ocr = ocrMessageSchema.safeParse(body);
  if (ocr.success) return { stage: 'pdf-ocr', fileId: ocr.data.fileId, runId: ocr.data.runId };
  const extract = extractMessageSchema.safeParse(body);
  if (extract.success) return { stage: 'pdf-extract', fileId: extract.data.fileId, runId: extract.data.runId };
  const fetch = fetchMessageSchema.safeParse(body);
  if (fetch.success) return { stage: 'pdf-fetch', fileId: fetch.data.fileId, runId: fetch.data.runId };
  return undefined;
}

/** The record stages during which a message of each pipeline stage is current (parts are queued during extraction and OCR). */
const CURRENT_AT: Record<PipelineStageName, string[]> = {
  'pdf-fetch': ['fetch'],
  'pdf-extract': ['extract'],
  'pdf-ocr': ['extract', 'ocr'],
  'pdf-embed': ['extract', 'ocr', 'embed'],
};

/** Steps: read the body → the run's record → fail it if the message is still current. True when it failed the run. */
export async function recordDeadLetter(deps: DeadLetterDeps, rawBody: string): Promise<boolean> {
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch {
    body = undefined;
  }
  const dead = deadLetterOf(body);
  if (!dead) {
    // Nothing names a file: there is no record to end. Kept in the logs, not retried.
    logger.error('dead-letter message without a pipeline body', { body: rawBody.slice(0, 512) });
    return false;
  }
  const record = await deps.files.get(dead.fileId);
  if (
    record?.status !== 'processing' ||
    record.runId !== dead.runId ||
    !CURRENT_AT[dead.stage].includes(record.stage)
  ) {
    logger.info('dead-letter message of a run that has moved on', {
      ...dead,
      status: record?.status,
      ...(record?.status === 'processing' && { recordStage: record.stage }),
    });
    return false;
  }
  const failed = await deps.files.fail(
    dead.fileId,
    dead.runId,
    {
      reason: 'PROCESSING_FAILED',
      message: `Processing failed in ${dead.stage}: the stage stopped on every attempt`,
      stage: dead.stage,
    },
    isoNow(deps.clock),
  );
  if (failed) {
    logger.warn('ingestion failed: its stage died on every attempt', { ...dead });
    metrics.ingestionFailed('PROCESSING_FAILED');
    await releaseAfterRunEnded(deps.releaseWaiting, record.userId, { fileId: dead.fileId, runId: dead.runId });
    await deps.events?.emit(record.userId, 'file.failed', {
      fileId: dead.fileId,
      fileName: record.fileName,
      failure: { reason: 'PROCESSING_FAILED', stage: dead.stage },
    });
  }
  return failed;
}
