import { stageSettings } from '#infra/routes.ts';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { extractMessageSchema } from '#shared/pdf/messages.ts';
import { runExtract } from '#shared/pdf/extract-stage.ts';
import { pipelineDeps } from '#shared/pdf/pipeline-deps.ts';
import { stageHandler } from '#shared/pdf/stage-runner.ts';

// pdf-extract (SQS): text per page with pdfjs-dist in a bounded child process, token-aware chunks, parts fanned out to pdf-embed.
const deps = pipelineDeps(config(), systemClock);

export const handler = stageHandler(stageSettings('pdf-extract'), extractMessageSchema, deps, (deps, msg, ctx) =>
  runExtract(deps, msg, { remainingMs: ctx.remainingMs, memoryMb: ctx.memoryMb }),
);
