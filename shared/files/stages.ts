import type { Config } from '../config.ts';

// The pipeline's stages by name, and the setting that holds each one's queue URL. The deployment
// (infra/routes.ts) gives each stage its queue, memory and timeout; the domain only needs to
// know where to send.

export const pipelineStageNames = ['pdf-fetch', 'pdf-extract', 'pdf-ocr', 'pdf-embed'] as const;

export type PipelineStageName = (typeof pipelineStageNames)[number];

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
