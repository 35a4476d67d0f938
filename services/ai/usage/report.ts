import { addTotals, emptyTotals, type UsageBucket, type UsageTotals } from '../../../projections/usage.ts';

/** What usage can be grouped by, as `group_by` names them. */
export const USAGE_DIMENSIONS = ['model', 'modality', 'token', 'day', 'hour'] as const;
export type UsageDimension = (typeof USAGE_DIMENSIONS)[number];

/** The field each dimension is reported in. */
export const USAGE_FIELDS = {
  model: 'model',
  modality: 'modality',
  token: 'token_id',
  day: 'day',
  hour: 'hour',
} as const satisfies Record<UsageDimension, string>;
type UsageField = (typeof USAGE_FIELDS)[UsageDimension];

/** The measures of every group, in the order CSV columns show them. */
export const USAGE_MEASURES = [
  'requests',
  'failures',
  'input_tokens',
  'output_tokens',
  'avg_latency_ms',
  'cost_usd',
] as const;

export type UsageGroup = Partial<Record<UsageField, string | null>> & {
  [M in (typeof USAGE_MEASURES)[number]]: number;
};

/** Micro-dollars as dollars, exact to the micro-dollar. */
export const usdOf = (micro: number) => micro / 1_000_000;

/** A dimension's value for one bucket of one hour (`YYYY-MM-DDTHH`, UTC). */
function dimensionValue(dimension: UsageDimension, hour: string, bucket: UsageBucket): string | null {
  switch (dimension) {
    case 'model':
      return bucket.model;
    case 'modality':
      return bucket.modality;
    case 'token':
      return bucket.tokenId;
    case 'day':
      return hour.slice(0, 10);
    case 'hour':
      return `${hour}:00:00Z`;
    default:
      return dimension satisfies never;
  }
}

export interface UsageReport {
  totals: {
    requests: number;
    failures: number;
    input_tokens: number;
    output_tokens: number;
    cost_usd: number;
  };
  groups: UsageGroup[];
}

/**
 * Sums the buckets of the hours from `from` to `to` (both `YYYY-MM-DDTHH`, inclusive) into one group
 * per combination of the values of `by`, in the order of those values (oldest first, a null token last).
 */
export function usageReport(
  hours: Iterable<[string, Map<string, UsageBucket>]>,
  range: { from: string; to: string },
  by: readonly UsageDimension[],
): UsageReport {
  const sums = new Map<string, { values: (string | null)[]; totals: UsageTotals }>();
  const all = emptyTotals();
  for (const [hour, buckets] of hours) {
    if (hour < range.from || hour > range.to) continue;
    for (const bucket of buckets.values()) {
      const values = by.map((dimension) => dimensionValue(dimension, hour, bucket));
      const key = JSON.stringify(values);
      let sum = sums.get(key);
      if (!sum) {
        sum = { values, totals: emptyTotals() };
        sums.set(key, sum);
      }
      addTotals(sum.totals, bucket.totals);
      addTotals(all, bucket.totals);
    }
  }
  const ordered = [...sums.values()].sort((a, b) => compareValues(a.values, b.values));
  return {
    totals: {
      requests: all.requests,
      failures: all.failures,
      input_tokens: all.input_tokens,
      output_tokens: all.output_tokens,
      cost_usd: usdOf(all.cost_micro_usd),
    },
    groups: ordered.map(({ values, totals }) => ({
      ...Object.fromEntries(by.map((dimension, i) => [USAGE_FIELDS[dimension], values[i] ?? null])),
      requests: totals.requests,
      failures: totals.failures,
      input_tokens: totals.input_tokens,
      output_tokens: totals.output_tokens,
      avg_latency_ms: totals.requests ? Math.round(totals.latency_ms_total / totals.requests) : 0,
      cost_usd: usdOf(totals.cost_micro_usd),
    })),
  };
}

function compareValues(a: (string | null)[], b: (string | null)[]): number {
  for (const [i, x] of a.entries()) {
    const y = b[i] ?? null;
    if (x === y) continue;
    if (x === null) return 1;
    if (y === null) return -1;
    return x < y ? -1 : 1;
  }
  return 0;
}
