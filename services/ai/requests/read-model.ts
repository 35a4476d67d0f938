import { defineProjection } from '../../../shared/projections/projection.ts';
import type { PayloadEvent } from '../payloads/capture.ts';
import type { Modality } from '../providers/types.ts';
import { type GenerationAttempt, type GenerationEvent, USAGE_EVENT_TYPES } from '../usage/events.ts';
import { REFUSAL_EVENT_TYPES, type RefusalEvent } from './events.ts';

/** The newest requests kept per studio; older ones stay in the event log (`GET /v1/audit/events`). */
export const REQUEST_LOG_ROWS_PER_STUDIO = 10_000;
const DROP_AT_ONCE = REQUEST_LOG_ROWS_PER_STUDIO / 10;
const PAYLOAD_REFS = 100_000;

/** One generation request as the request log shows it. */
export interface RequestRow {
  id: string;
  /** Its order in the log: the cursor of `GET /v1/ai/requests`. */
  seq: number;
  /** When it ended (the event's time). */
  at: string;
  studio_id: string;
  token_id: string | null;
  format: string | null;
  /** What the request asked for: a model or a route. */
  model: string | null;
  /** The model that answered (or last failed); null when refused before any. */
  target: string | null;
  modality: Modality;
  outcome: 'answered' | 'failed' | 'refused';
  status: number;
  error_code: string | null;
  error_message: string | null;
  attempts: GenerationAttempt[];
  latency_ms: number;
  /** A stream's time to its first frame. */
  ttfb_ms: number | null;
  input_tokens: number;
  output_tokens: number;
  cost_micro_usd: number;
  /** The response cache's answer: null when it was not asked (off for the studio and the request). */
  cache: 'hit' | 'miss' | null;
}

export interface RequestsState {
  /** studio → its newest rows, oldest first. */
  byStudio: Map<string, RequestRow[]>;
  byId: Map<string, RequestRow>;
  /** studio → refusals counted, not recorded one by one (a flood beyond the per-minute bound). */
  counted: Map<string, number>;
  /** request → where its captured payload is: the revision of its event in `payloads-<studio>`. */
  payloads: Map<string, number>;
  seq: number;
}

type Handled = GenerationEvent | RefusalEvent | PayloadEvent;

// Each row is one object literal with every field in the same order: a spread would build it field
// by field, and this runs for every generation.
function rowOf(event: Handled & { createdAt: string }, seq: number): RequestRow | undefined {
  const at = event.createdAt;
  switch (event.type) {
    case 'GenerationCompleted':
    case 'GenerationFailed': {
      const d = event.data;
      const failed = event.type === 'GenerationFailed' ? event.data : undefined;
      return {
        id: d.requestId,
        seq,
        at,
        studio_id: d.studioId,
        token_id: d.tokenId ?? null,
        format: d.format ?? null,
        model: d.route ?? d.model,
        target: d.model,
        modality: d.modality,
        outcome: failed ? 'failed' : 'answered',
        status: d.status,
        error_code: failed?.errorCode ?? null,
        error_message: failed?.errorMessage ?? null,
        attempts: d.attempts ?? [],
        latency_ms: d.latencyMs,
        ttfb_ms: d.firstByteMs ?? null,
        input_tokens: d.inputTokens,
        output_tokens: d.outputTokens,
        cost_micro_usd: d.costMicroUsd ?? 0,
        cache: d.cached ? 'hit' : d.cacheMiss ? 'miss' : null,
      };
    }
    case 'GenerationRefused': {
      const d = event.data;
      return {
        id: d.requestId,
        seq,
        at,
        studio_id: d.studioId,
        token_id: d.tokenId,
        format: d.format,
        model: d.model,
        target: null,
        modality: d.modality,
        outcome: 'refused',
        status: d.status,
        error_code: d.errorCode,
        error_message: d.errorMessage,
        attempts: [],
        latency_ms: d.latencyMs,
        ttfb_ms: null,
        input_tokens: 0,
        output_tokens: 0,
        cost_micro_usd: 0,
        cache: null,
      };
    }
    default:
      return undefined;
  }
}

/** The request log: every generation request of a known token, answered, failed or refused. */
export const requestsProjection = defineProjection<RequestsState, Handled>({
  name: 'requests',
  schemaVersion: 1,
  // Thousands of rows: saved once a minute (or after 50,000 events), not with every other snapshot.
  snapshotEveryMs: 60_000,
  // Rows are never changed once made, and the snapshot copies the lists that hold them.
  serializeInTurns: true,
  handles: [...USAGE_EVENT_TYPES, ...REFUSAL_EVENT_TYPES, 'PayloadCaptured'],
  initialState: () => ({
    byStudio: new Map(),
    byId: new Map(),
    counted: new Map(),
    payloads: new Map(),
    seq: 0,
  }),
  toSnapshot: (state) => ({
    rows: [...state.byStudio.values()].flat(),
    counted: [...state.counted],
    payloads: [...state.payloads],
    seq: state.seq,
  }),
  fromSnapshot: (snapshot) => {
    const { rows, counted, payloads, seq } = snapshot as {
      rows: RequestRow[];
      counted: [string, number][];
      payloads: [string, number][];
      seq: number;
    };
    const state: RequestsState = {
      byStudio: new Map(),
      byId: new Map(),
      counted: new Map(counted),
      payloads: new Map(payloads),
      seq,
    };
    for (const row of [...rows].sort((a, b) => a.seq - b.seq)) keep(state, row);
    return state;
  },
  apply(state, event) {
    if (event.type === 'PayloadCaptured') {
      state.payloads.set(event.data.requestId, event.revision);
      // As bounded as the rows: the oldest refs go first.
      if (state.payloads.size > PAYLOAD_REFS)
        state.payloads.delete(state.payloads.keys().next().value as string);
      return;
    }
    if (event.type === 'GenerationRefusalsCounted') {
      const { studioId, count } = event.data;
      state.counted.set(studioId, (state.counted.get(studioId) ?? 0) + count);
      return;
    }
    const row = rowOf(event, ++state.seq);
    if (row) keep(state, row);
  },
});

function keep(state: RequestsState, row: RequestRow): void {
  let rows = state.byStudio.get(row.studio_id);
  if (!rows) {
    rows = [];
    state.byStudio.set(row.studio_id, rows);
  }
  rows.push(row);
  state.byId.set(row.id, row);
  // The oldest go a tenth at a time: a shift per request would move the whole array each time.
  if (rows.length >= REQUEST_LOG_ROWS_PER_STUDIO + DROP_AT_ONCE) {
    const dropped = rows.splice(0, rows.length - REQUEST_LOG_ROWS_PER_STUDIO);
    for (const old of dropped) if (state.byId.get(old.id) === old) state.byId.delete(old.id);
  }
}
