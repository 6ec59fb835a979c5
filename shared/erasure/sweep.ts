import { buildPendingExports, type AccountExportDeps } from '../account-export/account-export.ts';
import { resumeErasures, type ErasureDeps } from './erasure.ts';
import { sweepExpired, type RetentionResult } from './retention.ts';

/**
 * The periodic sweep: finishes the erasures still marked, builds the account exports waiting,
 * then deletes what retention says is too old, and last releases queued ingestions a lost
 * release left waiting (`releaseStuckIngestions`, docs/DECISIONS.md "Fair bulk ingestion"). Run by the data-sweep function on a schedule
 * (deployed) and by `npm start` on an interval.
 */
export async function runSweep(
  deps: ErasureDeps & { exports: AccountExportDeps; releaseStuckIngestions?: () => Promise<number> },
  settings: { retentionDays: number },
  hasTime: () => boolean = () => true,
): Promise<RetentionResult & { erasures: number; exports: number; releasedIngestions: number }> {
  const erasures = await resumeErasures(deps);
  const exports = await buildPendingExports(deps.exports, hasTime);
  const expired = await sweepExpired(deps, settings, deps.clock(), hasTime);
  const releasedIngestions = hasTime() && deps.releaseStuckIngestions ? await deps.releaseStuckIngestions() : 0;
  return { erasures, exports, ...expired, releasedIngestions };
}
