import * as z from '../zod.ts';
import { settingsPiece } from './core.ts';
import { int } from './fields.ts';

// Chat replies: prompt and reply sizes, history, streaming, passages per file-chat prompt.

export const chatSettings = settingsPiece({
  // Chat limits.
  PROMPT_MAX_CHARS: z._default(int(1, 200_000), 16_000),
  HISTORY_TOKEN_BUDGET: z._default(int(0, 1_000_000), 6_000),
  REPLY_MAX_TOKENS: z._default(int(16, 100_000), 1_024),
  STREAM_HEARTBEAT_MS: z._default(int(100, 60_000), 10_000),
  /** A streamed reply whose generator has not written for this long is taken for dead (failed). */
  REPLY_STALE_MS: z._default(int(1_500, 3_600_000), 30_000),
  // Passages retrieved for a prompt in a file chat (the sources a reply is given and may cite).
  RETRIEVAL_K: z._default(int(1, 50), 6),
});
