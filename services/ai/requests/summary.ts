import { REQUEST_LOG_ROWS_PER_STUDIO, type RequestRow } from './read-model.ts';

export interface SummaryWindow {
  from: number;
  to: number;
}

/** The value at quantile `q` of sorted `values` (nearest rank). */
const quantile = (sorted: readonly number[], q: number) =>
  sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;

const usd = (micro: number) => micro / 1_000_000;

interface Tally {
  requests: number;
  failures: number;
  cost: number;
}
const tally = (): Tally => ({ requests: 0, failures: 0, cost: 0 });
const add = (into: Tally, row: RequestRow) => {
  into.requests++;
  if (row.outcome !== 'answered') into.failures++;
  into.cost += row.cost_micro_usd;
};

/**
 * What the console's overview shows of a window of the request log: totals and error rate, an
 * hourly series, latency quantiles and cost per model, the tokens that spent most. `complete` says
 * whether the log still holds the whole window (it keeps the newest requests of each studio).
 */
export function summarize(rowsByStudio: readonly (readonly RequestRow[])[], window: SummaryWindow) {
  const total = tally();
  const outcomes = { answered: 0, failed: 0, refused: 0 };
  const hours = new Map<string, Tally>();
  const models = new Map<string, Tally & { latencies: number[] }>();
  const tokens = new Map<string, Tally>();
  let complete = true;
  for (const rows of rowsByStudio) {
    if (
      rows.length > 0 &&
      Date.parse(rows[0]!.at) > window.from &&
      rows.length >= REQUEST_LOG_ROWS_PER_STUDIO
    )
      complete = false;
    for (const row of rows) {
      const at = Date.parse(row.at);
      if (at < window.from || at > window.to) continue;
      add(total, row);
      outcomes[row.outcome]++;
      const hour = row.at.slice(0, 13);
      const inHour = hours.get(hour) ?? tally();
      add(inHour, row);
      hours.set(hour, inHour);
      const model = row.target ?? row.model ?? '(none)';
      const ofModel = models.get(model) ?? { ...tally(), latencies: [] };
      add(ofModel, row);
      if (row.outcome === 'answered') ofModel.latencies.push(row.latency_ms);
      models.set(model, ofModel);
      if (row.token_id !== null) {
        const ofToken = tokens.get(row.token_id) ?? tally();
        add(ofToken, row);
        tokens.set(row.token_id, ofToken);
      }
    }
  }
  return {
    requests: total.requests,
    ...outcomes,
    error_rate: total.requests === 0 ? 0 : total.failures / total.requests,
    cost_usd: usd(total.cost),
    complete,
    series: [...hours]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([hour, t]) => ({ hour, requests: t.requests, failures: t.failures, cost_usd: usd(t.cost) })),
    models: [...models]
      .map(([model, t]) => {
        const sorted = [...t.latencies].sort((a, b) => a - b);
        return {
          model,
          requests: t.requests,
          failures: t.failures,
          p50_ms: quantile(sorted, 0.5),
          p95_ms: quantile(sorted, 0.95),
          cost_usd: usd(t.cost),
        };
      })
      .sort((a, b) => b.requests - a.requests || a.model.localeCompare(b.model)),
    top_tokens: [...tokens]
      .map(([token_id, t]) => ({
        token_id,
        requests: t.requests,
        failures: t.failures,
        cost_usd: usd(t.cost),
      }))
      .sort((a, b) => b.cost_usd - a.cost_usd || b.requests - a.requests)
      .slice(0, 10),
  };
}
