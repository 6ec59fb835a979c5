import '#shared/config/pdf.ts';
import { stageSettings } from '#shared/files/stages.ts';
import { availableParallelism } from 'node:os';
import { systemClock } from '#shared/clock.ts';
import { config } from '#shared/config.ts';
import { ocrMessageSchema } from '#shared/ingestion/queue-messages.ts';
import { SharedOcrEngine } from '#shared/pdf/ocr/engine.ts';
import { runOcr } from '#shared/ingestion/ocr-stage.ts';
import { pipelineDeps } from '#shared/ingestion/pipeline-deps.ts';
import { stageHandler } from '#shared/ingestion/stage-handler.ts';

// pdf-ocr (SQS): a range of pages without usable text, drawn with pdf.js on @napi-rs/canvas and
// recognised by tesseract.js worker threads (one per vCPU unless OCR_WORKERS says otherwise).
const settings = config();
const deps = pipelineDeps(settings, systemClock);
const engine = new SharedOcrEngine(() => ({
  languages: settings.OCR_LANGUAGES,
  workers: settings.OCR_WORKERS ?? availableParallelism(),
}));

export const handler = stageHandler(stageSettings('pdf-ocr'), ocrMessageSchema, deps, (deps, msg, ctx) =>
  runOcr(deps, msg, { withEngine: (work) => engine.use(work), remainingMs: ctx.remainingMs, memoryMb: ctx.memoryMb }),
);
