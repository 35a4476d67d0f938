import { defineProjection } from '../../../shared/projections/projection.ts';
import { CONNECTION_EVENT_TYPES, type Connection, type ConnectionEvent } from './connection.ts';

export type ConnectionRecord = Connection & { updated_at: string };

/** The connections by id, and a version that moves with every change (the catalog rebuilds on it). */
export interface ConnectionsReadModel {
  byId: Map<string, ConnectionRecord>;
  version: number;
}

export const connectionsProjection = defineProjection<ConnectionsReadModel, ConnectionEvent>({
  name: 'connections',
  schemaVersion: 1,
  handles: CONNECTION_EVENT_TYPES,
  initialState: () => ({ byId: new Map(), version: 0 }),
  toSnapshot: (state) => ({ byId: [...state.byId], version: state.version }),
  fromSnapshot: (snapshot) => {
    const { byId, version } = snapshot as { byId: [string, ConnectionRecord][]; version: number };
    return { byId: new Map(byId), version };
  },
  apply(state, event) {
    state.version++;
    switch (event.type) {
      case 'ConnectionSet':
        state.byId.set(event.data.id, { ...event.data, updated_at: event.createdAt });
        return;
      case 'ConnectionRemoved':
        state.byId.delete(event.data.id);
        return;
      default:
        return;
    }
  },
});
