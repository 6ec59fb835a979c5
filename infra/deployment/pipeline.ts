import { stageMaxReceiveCount, type PipelineStageName } from '#shared/files/stages.ts';
import { PDF_COPY_TMP_MB, type Access } from './access.ts';

// What the functions outside HTTP get: the pipeline's stages, its dead-letter consumer, the webhook
// delivery and the scheduled tasks (their queues, batches, limits and access). A stage's receives
// before its DLQ are the domain's (its runner acts on the last one: shared/files/stages.ts).

export interface PipelineStage {
  /** SQS queue feeding this stage; each has a dead-letter queue `<queue>-dlq`. */
  queue: string;
  batchSize: number;
  /** Concurrent batches (Lambda maximum concurrency of the event source mapping). */
  maxConcurrency: number;
  timeoutSeconds: number;
  memoryMb: number;
  /** The function's /tmp (MB); Lambda's 512 unless set. */
  tmpMb?: number;
  /** Receives before a message moves to the DLQ. */
  maxReceiveCount: number;
  /**
   * Its work is mostly CPU of its own (pdf.js): on Lambda each invocation has its share of a vCPU,
   * but the local runtime's instances share the machine's cores, so it runs no more of them at
   * once than the machine has (localConcurrency, infra/local/runtime.ts).
   */
  cpuBound?: boolean;
  access: Access;
}

export const pipelineStages = {
  'pdf-fetch': {
    queue: 'pdf-fetch',
    batchSize: 1,
    maxConcurrency: 4,
    timeoutSeconds: 120,
    memoryMb: 512,
    maxReceiveCount: stageMaxReceiveCount['pdf-fetch'],
    // Writes a run's source PDF; a stale run's clean-up deletes its work files and vectors.
    // Every stage that can end a run sends its owner's next waiting run to pdf-fetch
    // (docs/DECISIONS.md "Fair bulk ingestion").
    access: {
      table: 'readwrite',
      bucket: { write: ['work/', 'vectors/'] },
      sendTo: ['pdf-extract', 'pdf-fetch'],
      vectors: ['write'],
      events: true,
    },
  },
  'pdf-extract': {
    queue: 'pdf-extract',
    batchSize: 1,
    // A 2,000-page document is read in 8 ranges at once (PDF_EXTRACT_PAGES_PER_RANGE 256).
    maxConcurrency: 8,
    cpuBound: true,
    timeoutSeconds: 300,
    memoryMb: 1536,
    tmpMb: PDF_COPY_TMP_MB,
    maxReceiveCount: stageMaxReceiveCount['pdf-extract'],
    access: {
      table: 'readwrite',
      bucket: { read: ['work/'], write: ['work/', 'vectors/'] },
      // It embeds the parts it makes (shared/ingestion/inline-embed.ts).
      ai: ['embeddings'],
      sendTo: ['pdf-extract', 'pdf-ocr', 'pdf-embed', 'pdf-fetch'],
      vectors: ['write'],
      events: true,
    },
  },
  // OCR of pages without usable text, a range of pages per message (OCR_PAGES_PER_MESSAGE), so a
  // long scan is recognised by up to maxConcurrency invocations at once, each with a tesseract
  // worker thread per vCPU (3008 MB is 2 vCPUs). The last range to finish chunks the recognised
  // text and queues its parts to pdf-embed.
  'pdf-ocr': {
    queue: 'pdf-ocr',
    batchSize: 1,
    maxConcurrency: 10,
    timeoutSeconds: 600,
    memoryMb: 3008,
    tmpMb: PDF_COPY_TMP_MB,
    maxReceiveCount: stageMaxReceiveCount['pdf-ocr'],
    access: {
      table: 'readwrite',
      bucket: { read: ['work/'], write: ['work/', 'vectors/'] },
      sendTo: ['pdf-embed', 'pdf-fetch'],
      vectors: ['write'],
      events: true,
    },
  },
  'pdf-embed': {
    queue: 'pdf-embed',
    batchSize: 1,
    maxConcurrency: 8,
    timeoutSeconds: 300,
    memoryMb: 1024,
    maxReceiveCount: stageMaxReceiveCount['pdf-embed'],
    // Completion packs the parts' vectors (work/) into vectors/.
    access: {
      table: 'readwrite',
      bucket: { read: ['work/'], write: ['work/', 'vectors/'] },
      ai: ['embeddings'],
      sendTo: ['pdf-fetch'],
      vectors: ['write'],
      events: true,
    },
  },
} as const satisfies Record<PipelineStageName, PipelineStage>;

/**
 * A consumer of the pipeline's dead-letter queues (its event sources are every stage's DLQ). A
 * message lands there when its stage failed on every attempt, including ways in which no code of
 * the stage ran to record it (out of memory, timeout, crash); the consumer marks the file failed
 * (PROCESSING_FAILED, naming the stage), so no file stays `processing`.
 */
export interface DeadLetterConsumer {
  batchSize: number;
  timeoutSeconds: number;
  memoryMb: number;
  access: Access;
}

export const deadLetterConsumers = {
  'pdf-dead-letter': {
    batchSize: 10,
    timeoutSeconds: 30,
    memoryMb: 256,
    access: { table: 'readwrite', sendTo: ['pdf-fetch'], events: true },
  },
} as const satisfies Record<string, DeadLetterConsumer>;

// --- Webhooks: the delivery function, fed by the webhook queue (its DLQ: `<queue>-dlq`). Each
// message is an event to fan out or one attempt (WEBHOOK_TIMEOUT_MS at most, under the timeout);
// a failed attempt queues the next itself, so SQS's receives only cover crashes.
interface QueueConsumer {
  queue: string;
  batchSize: number;
  maxConcurrency: number;
  timeoutSeconds: number;
  memoryMb: number;
  maxReceiveCount: number;
  access: Access;
}

export const webhookDelivery = {
  name: 'webhook-delivery',
  entry: 'functions/webhook-delivery.ts',
  queue: 'webhook-delivery',
  batchSize: 1,
  maxConcurrency: 10,
  timeoutSeconds: 30,
  memoryMb: 256,
  maxReceiveCount: 5,
  access: { table: 'readwrite', events: true },
} as const satisfies QueueConsumer & { name: string; entry: string };
// --- end webhooks

export interface ScheduledTask {
  /** Minutes between two runs (an EventBridge schedule; `npm start` uses SWEEP_INTERVAL_SECONDS). */
  everyMinutes: number;
  timeoutSeconds: number;
  memoryMb: number;
  access: Access;
}

export const scheduledTasks = {
  // Finishes erasures (DELETE /me), builds account exports (reads uploads/, writes exports/) and
  // applies RETENTION_DAYS (shared/erasure/sweep.ts): every two minutes, so an erasure the request
  // could not finish is done within five.
  'data-sweep': {
    everyMinutes: 2,
    timeoutSeconds: 110,
    memoryMb: 512,
    access: {
      table: 'readwrite',
      bucket: { read: ['uploads/'], write: ['uploads/', 'work/', 'vectors/', 'exports/'] },
      sendTo: ['pdf-fetch'],
      vectors: ['delete'],
      events: true,
    },
  },
} as const satisfies Record<string, ScheduledTask>;
