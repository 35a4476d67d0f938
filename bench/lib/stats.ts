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
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted.at(-1)!, runs: sorted.length };
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
