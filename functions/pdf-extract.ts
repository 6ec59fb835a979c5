import { stageSettings } from '#shared/files/stages.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { extractMessageSchema } from '#shared/ingestion/queue-messages.ts';
import { runExtract } from '#shared/ingestion/extract-stage.ts';
import { embedContext } from '#shared/ingestion/embed-context.ts';
import { pipelineDeps } from '#shared/ingestion/pipeline-deps.ts';
import { stageHandler } from '#shared/ingestion/stage-handler.ts';

// pdf-extract (SQS): text per page with pdfjs-dist in a bounded child process, token-aware chunks,
// parts embedded here as pdf-embed would (the rest fanned out to pdf-embed).
const settings = config();
const deps = pipelineDeps(settings, systemClock);
const embedding = embedContext(settings, systemClock);

export const handler = stageHandler(stageSettings('pdf-extract'), extractMessageSchema, deps, async (deps, msg, ctx) =>
  runExtract(deps, msg, { remainingMs: ctx.remainingMs, memoryMb: ctx.memoryMb, embed: await embedding() }),
);
