import * as z from '../zod.ts';
import { settingsPiece } from './core.ts';
import { int } from './fields.ts';

// How documents are cut into passages (ingestion, and the reply prompts that budget for them).

export const chunkingSettings = settingsPiece({
  CHUNK_TOKENS: z._default(int(50, 8_000), 800),
  CHUNK_OVERLAP_TOKENS: z._default(int(0, 2_000), 100),
  // A part is one embedding request filled to the provider's limits; a lower cap here buys more
  // parallel parts at the price of more (smaller) requests.
  CHUNKS_PER_PART: z._default(int(1, 10_000), 2_048),
});
