import '../config/webhooks.ts';
import { bucketName, dynamo, sqsClient } from '../clients.ts';
import { s3Client } from '../s3-client.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { ChunkRepository } from '../files/chunk-repository.ts';
import { FileRepository } from '../files/file-repository.ts';
import { FileStorage } from '../files/storage.ts';
import { UsageLedger } from '../limits/usage-ledger.ts';
import { stageQueues, type StageQueues } from './stage-queues.ts';
import { userLimits } from '../limits/user-limits.ts';
import { WaitingQueue } from '../limits/waiting-queue.ts';
import { releaseWaiting, type IngestQueueDeps, type ReleaseWaiting } from './ingest-queue.ts';
import { vectorStoreFor, type VectorStore } from '../retrieval/vector-store.ts';
import { queuedEvents, type ServiceEvents } from '../events/service-events.ts';

// What every pipeline stage works with.

export interface PipelineDeps {
  files: FileRepository;
  chunks: ChunkRepository;
  storage: FileStorage;
  /** Where the embed stage writes a part's vectors and completion gathers them (vector-store.ts). */
  vectors: VectorStore;
  queues: StageQueues;
  /** The file owners' usage counters (tokens by model, pages). */
  usage: UsageLedger;
  config: Config;
  clock: Clock;
  /**
   * Frees the slot of a run that ended (completed, failed, superseded) and hands the user's freed
   * ingestion slots to their waiting runs, called where a run ends (docs/DECISIONS.md "Fair bulk
   * ingestion"); absent: nothing waits.
   */
  releaseWaiting?: ReleaseWaiting;
  /** Where a run's end is told to its owner's webhooks (file.completed, file.failed); absent: nowhere. */
  events?: ServiceEvents;
}

/** The users' ingestion queues on a configuration (the ingestion route, the stages, the sweep). */
export function ingestQueueDeps(config: Config, clock: Clock): IngestQueueDeps {
  return {
    files: new FileRepository(dynamo(), config.TABLE_NAME),
    waiting: new WaitingQueue(dynamo(), config.TABLE_NAME),
    limits: userLimits(dynamo(), config, clock),
    queues: stageQueues(sqsClient(), config),
    clock,
  };
}

/** The pipeline's dependencies on a configuration, composed by each stage function at its cold start. */
export function pipelineDeps(config: Config, clock: Clock): PipelineDeps {
  const queue = ingestQueueDeps(config, clock);
  const storage = new FileStorage(s3Client(), bucketName());
  return {
    files: new FileRepository(dynamo(), config.TABLE_NAME),
    chunks: new ChunkRepository(dynamo(), config.TABLE_NAME),
    storage,
    vectors: vectorStoreFor(config, storage),
    queues: stageQueues(sqsClient(), config),
    usage: new UsageLedger(dynamo(), config.TABLE_NAME, clock),
    config: config,
    clock,
    releaseWaiting: (userId, ended) => releaseWaiting(queue, userId, ended),
    events: queuedEvents(sqsClient(), config.WEBHOOK_QUEUE_URL),
  };
}
