import type { StudioEvent, StudioStatus } from '../services/studios/studio.ts';
import { STUDIO_EVENT_TYPES } from '../services/studios/studio.ts';
import { defineProjection } from '../shared/projections/projection.ts';
import { entriesOf, mapOf } from '../shared/projections/snapshot.ts';

/** A studio as admins see it (`GET /v1/studios/list`). */
export interface StudioRecord {
  id: string;
  name: string;
  status: StudioStatus;
  paused_reason: string | null;
  /** Seconds the response cache keeps the studio's answers; 0: off. */
  cache_ttl_s: number;
  created_at: string;
  updated_at: string;
  /** The revision of the studio's stream this record reflects. */
  version: number;
}

/** Studio id → its record. */
export type StudiosState = Map<string, StudioRecord>;

export const studiosProjection = defineProjection<StudiosState, StudioEvent>({
  name: 'studios',
  schemaVersion: 3,
  handles: STUDIO_EVENT_TYPES,
  initialState: () => new Map(),
  toSnapshot: entriesOf,
  fromSnapshot: (snapshot) => mapOf(snapshot, 'studios'),
  apply(state, event) {
    const { studioId } = event.data;
    if (event.type === 'StudioCreated') {
      state.set(studioId, {
        id: studioId,
        name: event.data.name,
        status: 'active',
        paused_reason: null,
        cache_ttl_s: event.data.cacheTtlS ?? 0,
        created_at: event.createdAt,
        updated_at: event.createdAt,
        version: event.revision,
      });
      return;
    }
    const studio = state.get(studioId);
    if (!studio) return;
    studio.version = event.revision;
    switch (event.type) {
      case 'StudioPaused':
        Object.assign(studio, {
          status: 'paused',
          paused_reason: event.data.reason,
          updated_at: event.createdAt,
        });
        break;
      case 'StudioActivated':
        Object.assign(studio, { status: 'active', paused_reason: null, updated_at: event.createdAt });
        break;
      case 'StudioRemoved':
        Object.assign(studio, { status: 'removed', updated_at: event.createdAt });
        break;
      case 'StudioSettingsChanged':
        studio.cache_ttl_s = event.data.cacheTtlS;
        studio.updated_at = event.createdAt;
        break;
      case 'TokenIssued':
      case 'TokenRevoked':
        break;
      default: {
        const unknown: never = event;
        throw new Error(`unhandled ${JSON.stringify(unknown)}`);
      }
    }
  },
});
