import type { UsageEvent } from '../services/ai/usage/events.ts';
import { USAGE_EVENT_TYPES } from '../services/ai/usage/events.ts';
import { defineProjection } from './projection.ts';

export interface UsageTotals {
  requests: number;
  failures: number;
  input_tokens: number;
  output_tokens: number;
  latency_ms_total: number;
}

/** studio → hour (ISO, `YYYY-MM-DDTHH`) → `model|modality` → totals. Small enough to keep in memory. */
export type UsageState = Record<string, Record<string, Record<string, UsageTotals>>>;

export const hourOf = (iso: string) => iso.slice(0, 13);

export const usageProjection = defineProjection<UsageState, UsageEvent>({
  name: 'usage',
  version: 1,
  handles: USAGE_EVENT_TYPES,
  initialState: () => ({}),
  apply(state, event) {
    const d = event.data;
    const hours = state[d.studioId] ?? {};
    state[d.studioId] = hours;
    const hour = hourOf(event.createdAt);
    const keys = hours[hour] ?? {};
    hours[hour] = keys;
    const key = `${d.model}|${d.modality}`;
    const totals = keys[key] ?? {
      requests: 0,
      failures: 0,
      input_tokens: 0,
      output_tokens: 0,
      latency_ms_total: 0,
    };
    keys[key] = totals;
    totals.requests++;
    if (event.type === 'GenerationFailed') totals.failures++;
    totals.input_tokens += d.inputTokens;
    totals.output_tokens += d.outputTokens;
    totals.latency_ms_total += d.latencyMs;
  },
});
