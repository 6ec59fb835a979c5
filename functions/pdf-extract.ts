import { stageSettings } from '#infra/routes.ts';
import { extractMessageSchema } from '#shared/pdf/messages.ts';
import { runExtract } from '#shared/pdf/extract-stage.ts';
import { stageHandler } from '#shared/pdf/stage-runner.ts';

// pdf-extract (SQS): text per page with pdfjs-dist in a bounded child process, token-aware chunks, parts fanned out to pdf-embed.
export const handler = stageHandler(stageSettings('pdf-extract'), extractMessageSchema, (deps, msg, ctx) =>
  runExtract(deps, msg, { remainingMs: ctx.remainingMs, memoryMb: ctx.memoryMb }),
);
