import { backfillCreatedIndex, createdBefore } from '../created-index.ts';
import { NotFoundError } from '../errors.ts';
import { deleteUpload } from '../files/upload-service.ts';
import type { ErasureDeps } from './erasure.ts';

// RETENTION_DAYS: chats (with their messages, shares and search entries) and files (with their
// chunks and objects) created longer ago than that are deleted by the routes' own delete code,
// so the storage quota, the search index and the attachments stay right (docs/DECISIONS.md
// "Erasure and retention"). The sweep that runs it: `npm start` on an interval, deployed a schedule.

const DAY_MS = 24 * 3600 * 1000;

export interface RetentionResult {
  chats: number;
  files: number;
}

/**
 * Deletes every chat and file created before `now` minus `retentionDays` (nothing when 0).
 * Steps: key the items stored before the creation index (once) → read the index up to the cutoff
 * → each file through DELETE /upload's delete → each chat through DELETE /chat's. An item deleted meanwhile (by its owner) is skipped.
 */
export async function sweepExpired(
  deps: Pick<ErasureDeps, 'db' | 'table' | 'chats' | 'uploads'>,
  settings: { retentionDays: number },
  now: Date,
  hasTime: () => boolean = () => true,
): Promise<RetentionResult> {
  const result: RetentionResult = { chats: 0, files: 0 };
  if (settings.retentionDays <= 0) return result;
  await backfillCreatedIndex(deps.db, deps.table, hasTime); // items stored before the index
  const cutoff = new Date(now.getTime() - settings.retentionDays * DAY_MS).toISOString();
  for await (const item of createdBefore(deps.db, deps.table, cutoff)) {
    if (!hasTime()) break;
    try {
      if (item.kind === 'FILE') {
        await deleteUpload(deps.uploads, { userId: item.userId, fileId: item.id });
        result.files++;
      } else {
        await deps.chats.delete(item.id, item.userId);
        result.chats++;
      }
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }
  return result;
}
