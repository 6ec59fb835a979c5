import * as z from '../zod.ts';
import { settingsPiece } from './core.ts';
import { str } from './fields.ts';

// The ingestion pipeline's queues (set by the stack and the local runtime).

export const queueSettings = settingsPiece({
  // Queue URLs are opaque to us (fauxqs answers with hosts a URL parser rejects).
  PDF_FETCH_QUEUE_URL: z.optional(str()),
  PDF_EXTRACT_QUEUE_URL: z.optional(str()),
  PDF_EMBED_QUEUE_URL: z.optional(str()),
  PDF_OCR_QUEUE_URL: z.optional(str()),
});
