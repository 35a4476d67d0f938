import { defineProjection } from '../../../shared/projections/projection.ts';
import { type Entries, entriesOf, mapOf } from '../../../shared/projections/snapshot.ts';
import { LIMITS_EVENT_TYPES, type LimitsEvent, scopeKey } from './limits.ts';

/** The rate limits of a studio (`token_id` null) or of one of its tokens, as admins see them. */
export interface LimitRecord {
  studio_id: string;
  token_id: string | null;
  rpm: number | null;
  tpm: number | null;
  max_concurrent: number | null;
  updated_at: string;
}

/** Studio id → (token id, or '' for the studio itself → its limits). */
export type LimitsState = Map<string, Map<string, LimitRecord>>;

export const limitsProjection = defineProjection<LimitsState, LimitsEvent>({
  name: 'limits',
  schemaVersion: 1,
  handles: LIMITS_EVENT_TYPES,
  initialState: () => new Map(),
  toSnapshot: (state) => [...state].map(([studioId, scopes]) => [studioId, entriesOf(scopes)]),
  fromSnapshot(snapshot) {
    const studios = mapOf<Entries<LimitRecord>>(snapshot, 'limits');
    return new Map(
      [...studios].map(([studioId, scopes]) => [studioId, mapOf<LimitRecord>(scopes, 'limits')]),
    );
  },
  apply(state, event) {
    const { studioId, tokenId } = event.data;
    switch (event.type) {
      case 'LimitsSet': {
        const scopes = state.get(studioId) ?? new Map<string, LimitRecord>();
        state.set(studioId, scopes);
        scopes.set(scopeKey(tokenId), {
          studio_id: studioId,
          token_id: tokenId,
          rpm: event.data.rpm,
          tpm: event.data.tpm,
          max_concurrent: event.data.maxConcurrent,
          updated_at: event.createdAt,
        });
        return;
      }
      case 'LimitsRemoved': {
        const scopes = state.get(studioId);
        scopes?.delete(scopeKey(tokenId));
        if (scopes?.size === 0) state.delete(studioId);
        return;
      }
      default:
        return;
    }
  },
});
