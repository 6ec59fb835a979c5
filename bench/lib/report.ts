// What every benchmark returns, the statistics they share and the tables the runner prints.
// A "check" is one figure: its value, the baseline measured in the same run (when it has one),
// the ratio between them, the target and whether it was met. Figures without a target are
// there to explain the others (a breakdown, a size).

export interface Check {
  metric: string;
  value: number;
  unit: string;
  /** The same quantity for the baseline, measured in the same run. */
  baseline?: number;
  /** value / baseline. */
  ratio?: number;
  /** The target, in words (e.g. "≤ 1.3 × baseline"). */
  target?: string;
  /** Met or missed; absent for figures without a target. */
  pass?: boolean;
}

export interface DetailTable {
  title: string;
  header: string[];
  rows: (string | number)[][];
}

export interface BenchResult {
  name: string;
  title: string;
  status: 'ok' | 'skipped' | 'error';
  /** Why it was skipped (a dependency not there yet) or what failed. */
  reason?: string;
  checks: Check[];
  details: DetailTable[];
  notes: string[];
  /** Raw figures for later analysis (samples, settings). */
  data?: Record<string, unknown>;
  durationMs: number;
}

export type BenchOutput = Pick<BenchResult, 'checks'> & Partial<Pick<BenchResult, 'details' | 'notes' | 'data'>>;

// ---- statistics -------------------------------------------------------------------------

/** The q-quantile (0..1) of the samples, linearly interpolated between the closest ranks. */
export function quantile(samples: number[], q: number): number {
  if (!samples.length) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
}

export const median = (samples: number[]) => quantile(samples, 0.5);
export const p99 = (samples: number[]) => quantile(samples, 0.99);
export const mean = (samples: number[]) => samples.reduce((a, b) => a + b, 0) / samples.length;

/** A check comparing a value with its baseline against a maximum (or minimum) ratio. */
export function ratioCheck(
  metric: string,
  value: number,
  baseline: number,
  unit: string,
  limit: { max?: number; min?: number },
): Check {
  const ratio = value / baseline;
  const target = limit.max !== undefined ? `≤ ${limit.max} × baseline` : `≥ ${limit.min} × baseline`;
  // A ratio exactly at its limit passes (2.6 / 2 is 1.3000000000000003 in floating point).
  const pass = limit.max !== undefined ? ratio <= limit.max + 1e-9 : ratio >= limit.min! - 1e-9;
  return { metric, value, unit, baseline, ratio, target, pass };
}

/** A check of a value against an absolute maximum (or minimum). */
export function absoluteCheck(
  metric: string,
  value: number,
  unit: string,
  limit: { max?: number; min?: number; eq?: number },
  extra: Partial<Check> = {},
): Check {
  let target: string;
  let pass: boolean;
  if (limit.eq !== undefined) {
    target = `= ${fmt(limit.eq)} ${unit}`.trim();
    pass = value === limit.eq;
  } else if (limit.max !== undefined) {
    target = `≤ ${fmt(limit.max)} ${unit}`.trim();
    pass = value <= limit.max;
  } else {
    target = `≥ ${fmt(limit.min!)} ${unit}`.trim();
    pass = value >= limit.min!;
  }
  return { metric, value, unit, target, pass, ...extra };
}

export const info = (metric: string, value: number, unit: string, extra: Partial<Check> = {}): Check => ({
  metric,
  value,
  unit,
  ...extra,
});

// ---- formatting -------------------------------------------------------------------------

/** A number with as many decimals as its size deserves. */
export function fmt(n: number | undefined): string {
  if (n === undefined || Number.isNaN(n)) return '–';
  const a = Math.abs(n);
  if (Number.isInteger(n)) return n.toLocaleString('en-US');
  if (a >= 1000) return Math.round(n).toLocaleString('en-US');
  if (a >= 100) return n.toFixed(0);
  if (a >= 10) return n.toFixed(1);
  if (a >= 1) return n.toFixed(2);
  return n.toFixed(3);
}

const withUnit = (n: number | undefined, unit: string) =>
  n === undefined ? '–' : `${fmt(n)}${unit ? ` ${unit}` : ''}`;

export function renderTable(
  header: string[],
  rows: (string | number)[][],
  rightAligned: (i: number) => boolean = () => false,
): string {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'number' ? fmt(c) : c)));
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (rightAligned(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

export function checksTable(checks: Check[]): string {
  const rows = checks.map((c) => [
    c.metric,
    withUnit(c.value, c.unit),
    withUnit(c.baseline, c.unit),
    c.ratio === undefined ? '–' : `${c.ratio.toFixed(2)} ×`,
    c.target ?? '',
    c.pass === undefined ? '' : c.pass ? 'PASS' : 'MISS',
  ]);
  return renderTable(['metric', 'value', 'baseline', 'ratio', 'target', 'result'], rows, (i) => i >= 1 && i <= 3);
}

export function renderResult(r: BenchResult): string {
  const head = `== ${r.name}: ${r.title} (${(r.durationMs / 1000).toFixed(1)} s)`;
  if (r.status === 'skipped') return `${head}\nSKIPPED: ${r.reason}`;
  const parts = [head];
  if (r.checks.length) parts.push(checksTable(r.checks));
  for (const d of r.details) parts.push(`-- ${d.title}\n${renderTable(d.header, d.rows, (i) => i > 0)}`);
  if (r.status === 'error') parts.push(`ERROR: ${r.reason}`);
  for (const n of r.notes) parts.push(`note: ${n}`);
  return parts.join('\n');
}
