import { CONSOLE_SESSION_EVENT_TYPES, type ConsoleSessionEvent } from '../services/console/sign-out.ts';
import { defineProjection } from '../shared/projections/projection.ts';
import { entriesOf, mapOf } from '../shared/projections/snapshot.ts';

/**
 * Console sessions signed out before their cookie expired: session id → when it would have
 * expired (ISO). A session's end is forgotten once that passed (its cookie is refused anyway).
 */
export type EndedSessions = Map<string, string>;

export const consoleSessionsProjection = defineProjection<EndedSessions, ConsoleSessionEvent>({
  name: 'console-sessions',
  schemaVersion: 1,
  handles: CONSOLE_SESSION_EVENT_TYPES,
  categories: ['console'],
  initialState: () => new Map(),
  toSnapshot: entriesOf,
  fromSnapshot: (snapshot) => mapOf(snapshot, 'console-sessions'),
  apply(state, event) {
    for (const [id, expiresAt] of state) if (expiresAt < event.createdAt) state.delete(id);
    state.set(event.data.sessionId, event.data.expiresAt);
  },
});
