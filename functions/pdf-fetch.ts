import { stageSettings } from '#infra/routes.ts';
import { fetchMessageSchema } from '#shared/pdf/messages.ts';
import { runFetch } from '#shared/pdf/fetch-stage.ts';
import { stageHandler } from '#shared/pdf/stage-runner.ts';

// pdf-fetch (SQS): download the PDF through the SSRF guard into the bucket, then queue extraction.
export const handler = stageHandler(stageSettings('pdf-fetch'), fetchMessageSchema, (deps, msg, ctx) => runFetch(deps, msg, { remainingMs: ctx.remainingMs() }));
