import type { GenerationEvent } from '../services/ai/usage/events.ts';
import { USAGE_EVENT_TYPES } from '../services/ai/usage/events.ts';
import { defineProjection } from '../shared/projections/projection.ts';
import { type Entries, entriesOf, mapOf } from '../shared/projections/snapshot.ts';

export interface UsageTotals {
  requests: number;
  failures: number;
  input_tokens: number;
  output_tokens: number;
  latency_ms_total: number;
  cost_micro_usd: number;
}

/** studio → hour (ISO, `YYYY-MM-DDTHH`) → `model|modality` → totals. Small enough to keep in memory. */
export type UsageState = Map<string, Map<string, Map<string, UsageTotals>>>;

type UsageSnapshot = Entries<Entries<Entries<UsageTotals>>>;

export const hourOf = (iso: string) => iso.slice(0, 13);

/** The value of `key` in `map`, made (and kept there) by `make` the first time. */
function entry<V>(map: Map<string, V>, key: string, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

export const usageProjection = defineProjection<UsageState, GenerationEvent>({
  name: 'usage',
  schemaVersion: 3,
  handles: USAGE_EVENT_TYPES,
  initialState: () => new Map(),
  toSnapshot: (state): UsageSnapshot =>
    [...state].map(([studio, hours]) => [studio, [...hours].map(([hour, keys]) => [hour, entriesOf(keys)])]),
  fromSnapshot: (snapshot) =>
    new Map(
      [...mapOf<Entries<Entries<UsageTotals>>>(snapshot, 'usage')].map(([studio, hours]) => [
        studio,
        new Map(
          [...mapOf<Entries<UsageTotals>>(hours, 'usage')].map(([hour, keys]) => [
            hour,
            mapOf(keys, 'usage'),
          ]),
        ),
      ]),
    ),
  apply(state, event) {
    const d = event.data;
    const hours = entry(state, d.studioId, () => new Map<string, Map<string, UsageTotals>>());
    const keys = entry(hours, hourOf(event.createdAt), () => new Map<string, UsageTotals>());
    const totals = entry(keys, `${d.model}|${d.modality}`, () => ({
      requests: 0,
      failures: 0,
      input_tokens: 0,
      output_tokens: 0,
      latency_ms_total: 0,
      cost_micro_usd: 0,
    }));
    totals.requests++;
    if (event.type === 'GenerationFailed') totals.failures++;
    totals.input_tokens += d.inputTokens;
    totals.output_tokens += d.outputTokens;
    totals.latency_ms_total += d.latencyMs;
    // Events recorded before prices existed carry no cost.
    totals.cost_micro_usd += d.costMicroUsd ?? 0;
  },
});
