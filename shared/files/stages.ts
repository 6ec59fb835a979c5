import '../config/queues.ts';
import type { Config } from '../config.ts';

// The pipeline's stages: one vocabulary. A run's record says which stage it is at (`fetch` …
// `embed`, then `done`); the function and queue of stage `x` are named `pdf-x`, and a setting
// holds each queue's URL. The deployment (infra/deployment/pipeline.ts) gives each stage its queue,
// memory and timeout; the domain only needs to know where to send, and when an attempt is the last.

/** The stage a run is at, as its file record says (`done` once completed). */
export type RunStage = 'fetch' | 'extract' | 'ocr' | 'embed';

/** The function (and queue) that runs a stage. */
export type PipelineStageName = `pdf-${RunStage}`;

export const pipelineStageNames = [
  'pdf-fetch',
  'pdf-extract',
  'pdf-ocr',
  'pdf-embed',
] as const satisfies readonly PipelineStageName[];

/** The configuration variable of each stage's queue URL (set by the stack and the local runtime). */
export const queueUrlSetting = {
  'pdf-fetch': 'PDF_FETCH_QUEUE_URL',
  'pdf-extract': 'PDF_EXTRACT_QUEUE_URL',
  'pdf-ocr': 'PDF_OCR_QUEUE_URL',
  'pdf-embed': 'PDF_EMBED_QUEUE_URL',
} as const satisfies Record<PipelineStageName, keyof Config>;

/** What a stage's runner needs to know of its deployment: its name and the receives before the DLQ. */
export interface StageSettings {
  name: PipelineStageName;
  maxReceiveCount: number;
}

/**
 * Receives of a stage's message before its queue moves it to the DLQ: the deployment sets each
 * queue's redrive from this, and the stage's runner treats the last receive as the last attempt.
 */
export const stageMaxReceiveCount = {
  'pdf-fetch': 5,
  'pdf-extract': 5,
  'pdf-ocr': 5,
  'pdf-embed': 5,
} as const satisfies Record<PipelineStageName, number>;

/** What a stage's runner (shared/ingestion/stage-handler.ts) is told of its deployment. */
export const stageSettings = (name: PipelineStageName): StageSettings => ({
  name,
  maxReceiveCount: stageMaxReceiveCount[name],
});
