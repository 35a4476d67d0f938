import { REFUSAL_EVENT_TYPES, type RefusalEvent } from '../services/ai/requests/events.ts';
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

/** The totals of one model, modality and token (null: the admin key) within one hour. */
export interface UsageBucket {
  model: string;
  modality: string;
  tokenId: string | null;
  totals: UsageTotals;
}

/**
 * studio → hour (ISO, `YYYY-MM-DDTHH`) → bucket key → bucket. The key is the JSON of the bucket's
 * model, modality and token, so no separator can make two buckets one. Small enough to keep in memory.
 */
export type UsageState = Map<string, Map<string, Map<string, UsageBucket>>>;

type UsageSnapshot = Entries<Entries<Entries<UsageBucket>>>;

export const hourOf = (iso: string) => iso.slice(0, 13);

export const emptyTotals = (): UsageTotals => ({
  requests: 0,
  failures: 0,
  input_tokens: 0,
  output_tokens: 0,
  latency_ms_total: 0,
  cost_micro_usd: 0,
});

/** Adds `from` into `into`. */
export function addTotals(into: UsageTotals, from: UsageTotals): void {
  into.requests += from.requests;
  into.failures += from.failures;
  into.input_tokens += from.input_tokens;
  into.output_tokens += from.output_tokens;
  into.latency_ms_total += from.latency_ms_total;
  into.cost_micro_usd += from.cost_micro_usd;
}

/** The value of `key` in `map`, made (and kept there) by `make` the first time. */
function entry<V>(map: Map<string, V>, key: string, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

export const usageProjection = defineProjection<UsageState, GenerationEvent | RefusalEvent>({
  name: 'usage',
  // 4: buckets are per token as well as per model and modality; 5: refused requests count as failures.
  schemaVersion: 5,
  handles: [...USAGE_EVENT_TYPES, ...REFUSAL_EVENT_TYPES],
  initialState: () => new Map(),
  toSnapshot: (state): UsageSnapshot =>
    [...state].map(([studio, hours]) => [studio, [...hours].map(([hour, keys]) => [hour, entriesOf(keys)])]),
  fromSnapshot: (snapshot) =>
    new Map(
      [...mapOf<Entries<Entries<UsageBucket>>>(snapshot, 'usage')].map(([studio, hours]) => [
        studio,
        new Map(
          [...mapOf<Entries<UsageBucket>>(hours, 'usage')].map(([hour, keys]) => [
            hour,
            mapOf(keys, 'usage'),
          ]),
        ),
      ]),
    ),
  apply(state, event) {
    const d = event.data;
    const hours = entry(state, d.studioId, () => new Map<string, Map<string, UsageBucket>>());
    const buckets = entry(hours, hourOf(event.createdAt), () => new Map<string, UsageBucket>());
    // Events of admin generations (and of any recorded before tokens were) name no token.
    const tokenId = d.tokenId ?? null;
    // A refusal is charged to the model it asked for (a counted flood of them to none).
    const model = 'model' in d ? (d.model ?? '') : '';
    const bucket = entry(buckets, JSON.stringify([model, d.modality, tokenId]), () => ({
      model,
      modality: d.modality,
      tokenId,
      totals: emptyTotals(),
    }));
    const totals = bucket.totals;
    if (event.type === 'GenerationRefused' || event.type === 'GenerationRefusalsCounted') {
      const count = event.type === 'GenerationRefused' ? 1 : event.data.count;
      totals.requests += count;
      totals.failures += count;
      return;
    }
    const generation = event.data;
    totals.requests++;
    if (event.type === 'GenerationFailed') totals.failures++;
    totals.input_tokens += generation.inputTokens;
    totals.output_tokens += generation.outputTokens;
    totals.latency_ms_total += generation.latencyMs;
    // Events recorded before prices existed carry no cost.
    totals.cost_micro_usd += generation.costMicroUsd ?? 0;
  },
});
