import { stageSettings } from '#shared/files/stages.ts';
import { config } from '#shared/config.ts';
import { systemClock } from '#shared/clock.ts';
import { embedMessageSchema } from '#shared/ingestion/queue-messages.ts';
import { runEmbed } from '#shared/ingestion/embed-stage.ts';
import { embedContext } from '#shared/ingestion/embed-context.ts';
import { pipelineDeps } from '#shared/ingestion/pipeline-deps.ts';
import { stageHandler } from '#shared/ingestion/stage-handler.ts';

// pdf-embed (SQS): one part's embeddings into chunk items and packed vectors; the last part completes the file.
const settings = config();
const deps = pipelineDeps(settings, systemClock);
const embedding = embedContext(settings, systemClock);

export const handler = stageHandler(stageSettings('pdf-embed'), embedMessageSchema, deps, async (deps, msg) =>
  runEmbed(deps, msg, await embedding()),
);
