import type { EnvEvent, StoredValue } from '../services/env/env.ts';
import { defineProjection } from '../shared/projections/projection.ts';
import { entriesOf, mapOf } from '../shared/projections/snapshot.ts';

export type EnvEntry = { key: string; updated_at: string } & StoredValue;

/** A variable as `GET /v1/env/list` shows it: a sealed value masked, a process value masked too. */
export interface EnvListItem {
  key: string;
  value: string;
  secret: boolean;
  source: 'store' | 'process';
  updated_at: string | null;
}

/** Key → its current value as stored (secrets stay sealed here; they are opened only when used). */
export type EnvStoreState = Map<string, EnvEntry>;

export const envProjection = defineProjection<EnvStoreState, EnvEvent>({
  name: 'env',
  schemaVersion: 2,
  handles: ['EnvVariableSet', 'EnvVariableRemoved'],
  initialState: () => new Map(),
  toSnapshot: entriesOf,
  fromSnapshot: (snapshot) => mapOf(snapshot, 'env'),
  apply(state, event) {
    switch (event.type) {
      case 'EnvVariableSet':
        state.set(event.data.key, { ...event.data, updated_at: event.createdAt });
        return;
      case 'EnvVariableRemoved':
        state.delete(event.data.key);
        return;
      default:
        return;
    }
  },
});
