import '#shared/config/retention.ts';
import '#shared/config/webhooks.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { accountExportDeps } from '#shared/account-export/account-export-deps.ts';
import { erasureDeps } from '#shared/erasure/erasure-deps.ts';
import { runSweep } from '#shared/erasure/sweep.ts';
import { logger } from '#shared/observability/logger.ts';
import { ingestQueueDeps } from '#shared/ingestion/pipeline-deps.ts';
import { releaseStuck } from '#shared/ingestion/ingest-queue.ts';
import { sqsClient } from '#shared/clients.ts';
import { queuedEvents } from '#shared/events/service-events.ts';

// data-sweep (a schedule): finishes unfinished erasures (DELETE /me), builds the account exports
// asked for (POST /me/export) and deletes the chats and files RETENTION_DAYS says are too old.
// Last, it releases queued PDF ingestions a lost release left waiting. What it does not reach
// before its deadline, the next run does.

const settings = config();
const ingestQueues = ingestQueueDeps(settings, systemClock);
const deps = {
  ...erasureDeps(settings, systemClock),
  exports: { ...accountExportDeps(systemClock), events: queuedEvents(sqsClient(), settings.WEBHOOK_QUEUE_URL) },
  releaseStuckIngestions: () => releaseStuck(ingestQueues),
};
/** Time kept back from the function's timeout to stop between two items. */
const STOP_MARGIN_MS = 10_000;

export const handler = async (_event: unknown, context: { getRemainingTimeInMillis(): number }) => {
  const deadline = Date.now() + context.getRemainingTimeInMillis() - STOP_MARGIN_MS;
  const result = await runSweep(deps, { retentionDays: settings.RETENTION_DAYS }, () => Date.now() < deadline);
  logger.info('Sweep done', { ...result });
  return result;
};
