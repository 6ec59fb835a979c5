import { stageSettings } from '#shared/files/stages.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { fetchMessageSchema } from '#shared/ingestion/queue-messages.ts';
import { runFetch } from '#shared/ingestion/fetch-stage.ts';
import { pipelineDeps } from '#shared/ingestion/pipeline-deps.ts';
import { stageHandler } from '#shared/ingestion/stage-handler.ts';

// pdf-fetch (SQS): download the PDF through the SSRF guard into the bucket, then queue extraction.
const deps = pipelineDeps(config(), systemClock);

export const handler = stageHandler(stageSettings('pdf-fetch'), fetchMessageSchema, deps, (deps, msg, ctx) =>
  runFetch(deps, msg, { remainingMs: ctx.remainingMs() }),
);
