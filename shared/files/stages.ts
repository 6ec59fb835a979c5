import type { Config } from '../config.ts';

// The pipeline's stages: one vocabulary. A run's record says which stage it is at (`fetch` …
// `embed`, then `done`); the function and queue of stage `x` are named `pdf-x`, and a setting
// holds each queue's URL. The deployment (infra/routes.ts) gives each stage its queue, memory and
// timeout; the domain only needs to know where to send.

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
