import type { Message, Session } from '../services/sessions/schemas.ts';
import type { SessionEvent } from '../services/sessions/session.ts';
import { SESSION_EVENT_TYPES } from '../services/sessions/session.ts';
import { defineProjection } from '../shared/projections/projection.ts';
import { entriesOf, mapOf } from '../shared/projections/snapshot.ts';

/** A session as the routes answer it. */
export type SessionRecord = Session;

/** A message as the routes answer it, plus what the runtime needs of it. */
export interface MessageView extends Message {
  turn_id: string;
  finish_reason: string | null;
  completed: boolean;
}

export interface SessionView {
  session: SessionRecord;
  messages: MessageView[];
  /** Turns not ended yet, oldest first; the first is running when `running` says so. */
  pending: string[];
  running: string | null;
}

/** Session id → its view. */
export type SessionsState = Map<string, SessionView>;

export const sessionsProjection = defineProjection<SessionsState, SessionEvent>({
  name: 'sessions',
  schemaVersion: 3,
  handles: SESSION_EVENT_TYPES,
  categories: ['session'],
  initialState: () => new Map(),
  toSnapshot: entriesOf,
  fromSnapshot: (snapshot) => mapOf(snapshot, 'sessions'),
  apply(state, event) {
    const id = event.streamId.slice('session-'.length);
    if (event.type === 'SessionCreated') {
      const d = event.data;
      state.set(id, {
        session: {
          id,
          title: d.title,
          model: d.model,
          system: d.system,
          kind: d.kind,
          chat_id: d.chatId,
          status: 'idle',
          parent_id: null,
          forked_from: null,
          created_at: event.createdAt,
          updated_at: event.createdAt,
          revision: event.revision,
        },
        messages: [],
        pending: [],
        running: null,
      });
      return;
    }
    if (event.type === 'SessionDeleted') {
      state.delete(id);
      return;
    }
    const view = state.get(id);
    if (!view) return;
    view.session.updated_at = event.createdAt;
    view.session.revision = event.revision;
    const message = (messageId: string) => view.messages.find((m) => m.id === messageId);
    switch (event.type) {
      case 'SessionForked':
        // A fork begins with copies of its source's events; this marks where its own begin.
        Object.assign(view.session, {
          parent_id: event.data.fromSessionId,
          forked_from: { session_id: event.data.fromSessionId, revision: event.data.atRevision },
          chat_id: null,
          created_at: event.createdAt,
        });
        break;
      case 'SystemUpdated': {
        // Field by field: the event's data is parsed JSON and must never be merged wholesale.
        const { title, model, system } = event.data;
        if (title !== undefined) view.session.title = title;
        if (model !== undefined) view.session.model = model;
        if (system !== undefined) view.session.system = system;
        break;
      }
      case 'TurnQueued':
        view.pending.push(event.data.turnId);
        break;
      case 'TurnStarted':
        view.running = event.data.turnId;
        break;
      case 'MessageCreated':
        view.messages.push({
          id: event.data.messageId,
          role: event.data.role,
          turn_id: event.data.turnId,
          parts: [],
          finish_reason: null,
          completed: false,
          created_at: event.createdAt,
        });
        break;
      case 'PartUpdated': {
        const m = message(event.data.messageId);
        if (!m) break;
        const at = m.parts.findIndex((p) => p.id === event.data.part.id);
        if (at < 0) m.parts.push(event.data.part);
        else m.parts[at] = event.data.part;
        break;
      }
      case 'MessageCompleted': {
        const m = message(event.data.messageId);
        if (m) Object.assign(m, { completed: true, finish_reason: event.data.finishReason });
        break;
      }
      case 'TurnCompleted':
      case 'TurnFailed':
      case 'TurnCancelled':
        view.pending = view.pending.filter((t) => t !== event.data.turnId);
        if (view.running === event.data.turnId) view.running = null;
        break;
      default: {
        const unknown: never = event;
        throw new Error(`unhandled ${JSON.stringify(unknown)}`);
      }
    }
    view.session.status = view.pending.length > 0 || view.running !== null ? 'busy' : 'idle';
  },
});
