import * as z from '../zod.ts';
import { settingsPiece } from './core.ts';
import { int } from './fields.ts';

// Retention: how long chats and files are kept, and how often the sweep runs locally.

export const retentionSettings = settingsPiece({
  // Days chats (with their messages) and files are kept after they were created; 0: until deleted.
  // The sweep (shared/erasure/retention.ts) deletes what is older (docs/DECISIONS.md "Erasure and retention").
  RETENTION_DAYS: z._default(int(0, 36_500), 0),
  // Seconds between two runs of the sweep under `npm start` (deployed: a schedule); 0: never.
  SWEEP_INTERVAL_SECONDS: z._default(int(0, 86_400), 60),
});
