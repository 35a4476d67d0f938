/** Median with min–max over repetitions, as docs/benchmarks.md reports every figure. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  runs: number;
}

export function summarize(values: readonly number[]): Summary | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return { median: medianOfSorted(sorted), min: sorted[0]!, max: sorted.at(-1)!, runs: sorted.length };
}

/** Per repetition a[i] op b[i] (the targets ran side by side in each), then median with min–max. */
export function paired(
  a: readonly number[],
  b: readonly number[],
  op: (x: number, y: number) => number,
): Summary | undefined {
  const n = Math.min(a.length, b.length);
  return summarize(Array.from({ length: n }, (_, i) => op(a[i]!, b[i]!)).filter((x) => Number.isFinite(x)));
}

/** The median (the mean of the two middle values of an even count); NaN for none. */
export function median(values: readonly number[]): number {
  return medianOfSorted([...values].sort((a, b) => a - b));
}

function medianOfSorted(sorted: readonly number[]): number {
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Nearest-rank percentile `p` (0–100) of values sorted ascending; NaN for none. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Three significant figures with thousands separators: the run-to-run noise is larger than that. */
export function round3(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (value === 0) return '0';
  const digits = Math.floor(Math.log10(Math.abs(value))) + 1;
  const decimals = Math.max(0, 3 - digits);
  const factor = 10 ** Math.max(0, digits - 3);
  const rounded = decimals > 0 ? value : Math.round(value / factor) * factor;
  return rounded.toLocaleString('en-US', {
    minimumFractionDigits: decimals,
    maximumFractionDigits: decimals,
  });
}

/** `12,300 (11,800–12,900)` */
export function formatRate(summary: Summary | undefined): string {
  if (!summary) return '–';
  if (summary.runs === 1) return round3(summary.median);
  return `${round3(summary.median)} (${round3(summary.min)}–${round3(summary.max)})`;
}

function seconds(ms: number): string {
  return ms >= 1000 ? `${round3(ms / 1000)} s` : `${round3(ms)} ms`;
}

/** `1.23 s (1.10–1.40 s)` */
export function formatDuration(summary: Summary | undefined): string {
  if (!summary) return '–';
  if (summary.runs === 1) return seconds(summary.median);
  return `${seconds(summary.median)} (${seconds(summary.min)}–${seconds(summary.max)})`;
}
