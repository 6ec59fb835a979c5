import { buildPendingExports, type AccountExportDeps } from '../account-export/account-export.ts';
import { resumeErasures, type ErasureDeps } from './erasure.ts';
import { sweepExpired, type RetentionResult } from './retention.ts';

/**
 * The periodic sweep: finishes the erasures still marked, builds the account exports waiting,
 * then deletes what retention says is too old. Run by the data-sweep function on a schedule
 * (deployed) and by `npm start` on an interval.
 */
export async function runSweep(
  deps: ErasureDeps & { exports: AccountExportDeps },
  settings: { retentionDays: number },
  hasTime: () => boolean = () => true,
): Promise<RetentionResult & { erasures: number; exports: number }> {
  const erasures = await resumeErasures(deps);
  const exports = await buildPendingExports(deps.exports, hasTime);
  const expired = await sweepExpired(deps, settings, deps.clock(), hasTime);
  return { erasures, exports, ...expired };
}
