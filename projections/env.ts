import type { EnvEvent, StoredValue } from '../services/env/env.ts';
import { defineProjection } from './projection.ts';

export type EnvEntry = { key: string; updated_at: string } & StoredValue;

/** Key → its current value as stored (secrets stay sealed here; they are opened only when used). */
export type EnvStoreState = Record<string, EnvEntry>;

export const envProjection = defineProjection<EnvStoreState, EnvEvent>({
  name: 'env',
  version: 1,
  handles: ['EnvVariableSet', 'EnvVariableRemoved'],
  initialState: () => ({}),
  apply(state, event) {
    switch (event.type) {
      case 'EnvVariableSet':
        state[event.data.key] = { ...event.data, updated_at: event.createdAt };
        return;
      case 'EnvVariableRemoved':
        delete state[event.data.key];
        return;
      default:
        return;
    }
  },
});
