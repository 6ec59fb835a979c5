import { relative } from 'node:path';
import type { ManifestFunction } from '../routes.ts';
import type { BuiltFunction } from '../build.ts';
import { DEFAULT_OUT_DIR } from '../project-paths.ts';

/** Size budgets for what a cold start reads, index.mjs and its static chunks (decimal MB): small API bundles keep cold starts short. */
const BUNDLE_BUDGET_BYTES: Record<string, number> = {
  'pdf-extract': 4_000_000,
};
export const HTTP_BUNDLE_BUDGET_BYTES = 1_000_000;
const QUEUE_BUNDLE_BUDGET_BYTES = 4_000_000;
export const budgetOf = (fn: Pick<ManifestFunction, 'name' | 'kind'>) =>
  BUNDLE_BUDGET_BYTES[fn.name] ?? (fn.kind === 'http' ? HTTP_BUNDLE_BUDGET_BYTES : QUEUE_BUNDLE_BUDGET_BYTES);

const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;

/**
 * The size table `npm run build` prints. The budget is for what a cold start reads ("at start"),
 * so that column sits beside it with a verdict; "asset" (everything uploaded: the bundle's
 * lazily loaded chunks, fonts, OCR data, source map) has no budget.
 */
export function sizeTable(built: BuiltFunction[], outDir = DEFAULT_OUT_DIR): string {
  const rows = built.map((b) => [
    b.name,
    b.kind,
    kb(b.bytes),
    `${b.budgetBytes / 1_000_000} MB`,
    b.bytes > b.budgetBytes ? 'OVER BUDGET' : `ok (${Math.round((100 * b.bytes) / b.budgetBytes)} %)`,
    kb(b.mapBytes),
    kb(b.assetBytes),
  ]);
  const header = ['function', 'kind', 'at start', 'budget', 'within budget', 'map', 'asset (no budget)'];
  const rightAligned = new Set([2, 3, 5, 6]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (rightAligned.has(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const total = built.reduce((sum, b) => sum + b.bytes, 0);
  const over = built.filter((b) => b.bytes > b.budgetBytes).length;
  return [
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    `${built.length} bundles in ${relative(process.cwd(), outDir) || '.'}/, ${kb(total)} read at start in all; ` +
      (over ? `${over} over budget` : 'all within budget'),
  ].join('\n');
}

/** What to say when bundles are over budget (their largest packages), or undefined when none is. */
export function overBudgetReport(built: BuiltFunction[]): string | undefined {
  const over = built.filter((b) => b.bytes > b.budgetBytes);
  if (!over.length) return undefined;
  return over
    .map(
      (b) =>
        `${b.name}: ${kb(b.bytes)} read at start is over its ${b.budgetBytes / 1_000_000} MB budget. Largest packages:\n` +
        b.largestInputs.map((i) => `  ${kb(i.bytes).padStart(10)}  ${i.path}`).join('\n'),
    )
    .join('\n\n');
}
