import * as z from '../zod.ts';
import { settingsPiece } from './core.ts';
import { int } from './fields.ts';

// Per-user limits (shared/limits/), across all instances; 0 turns one off.

export const limitSettings = settingsPiece({
  RATE_LIMIT_MESSAGES_PER_MINUTE: z._default(int(0, 100_000), 20),
  RATE_LIMIT_INGESTIONS_PER_MINUTE: z._default(int(0, 100_000), 10),
  RATE_LIMIT_UPLOADS_PER_MINUTE: z._default(int(0, 100_000), 20),
  // GET /message/pdf/{fileId}/pages/{page} per user (a first request draws the page).
  RATE_LIMIT_PAGES_PER_MINUTE: z._default(int(0, 100_000), 60),
  // Reads of shared chats (GET /shared/{shareId}, no sign-in) per source IP.
  RATE_LIMIT_SHARED_READS_PER_MINUTE: z._default(int(0, 100_000), 60),
  DAILY_TOKEN_BUDGET: z._default(int(0, 1_000_000_000_000), 1_000_000),
  // Replies (whole or streamed) one user may have in flight at once; one more answers 429.
  REPLIES_MAX_IN_FLIGHT_PER_USER: z._default(int(0, 10_000), 4),
  // Streams following replies (GET …/stream): per user per minute, open at once per user and per
  // reply; one more answers 429 (docs/DECISIONS.md "Followers of a reply").
  RATE_LIMIT_FOLLOWS_PER_MINUTE: z._default(int(0, 100_000), 60),
  FOLLOWS_MAX_IN_FLIGHT_PER_USER: z._default(int(0, 10_000), 4),
  REPLY_MAX_FOLLOWERS: z._default(int(0, 10_000), 2),
  PDF_MAX_IN_FLIGHT_PER_USER: z._default(int(1, 10_000), 3),
  // Ingestions beyond those in flight wait in the user's queue, up to this many (then 429; 0: no
  // queue, every one beyond is 429). The upload and ingestion rates allow a burst of this many
  // plus those in flight at once (docs/DECISIONS.md "Fair bulk ingestion").
  PDF_MAX_QUEUED_PER_USER: z._default(int(0, 10_000), 100),
});
