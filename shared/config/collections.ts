import * as z from '../zod.ts';
import { settingsPiece } from './core.ts';
import { int } from './fields.ts';

// Collections (shared/collections/): the longest name, how many one user may have, and how many
// files one may hold (docs/DECISIONS.md "Collections").

export const collectionSettings = settingsPiece({
  // Collections (shared/collections/): the longest name, how many one user may have, and how many
  // files one may hold (docs/DECISIONS.md "Collections").
  COLLECTION_NAME_MAX_CHARS: z._default(int(1, 1_000), 120),
  COLLECTIONS_MAX_PER_USER: z._default(int(1, 100_000), 100),
  COLLECTION_MAX_FILES: z._default(int(1, 10_000), 1_000),
});
