import { resumeErasures, type ErasureDeps } from './erasure.ts';
import { sweepExpired, type RetentionResult } from './retention.ts';

/**
 * The periodic sweep: finishes the erasures still marked, then deletes what retention says is
 * too old. Run by the data-sweep function on a schedule (deployed) and by `npm start` on an interval.
 */
export async function runSweep(
  deps: ErasureDeps,
  settings: { retentionDays: number },
  hasTime: () => boolean = () => true,
): Promise<RetentionResult & { erasures: number }> {
  const erasures = await resumeErasures(deps);
  const expired = await sweepExpired(deps, settings, deps.clock(), hasTime);
  return { erasures, ...expired };
}
