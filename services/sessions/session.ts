import { type Decider, unknownCase } from '../../shared/decider.ts';
import { DomainError } from '../../shared/errors.ts';
import { scrubCredentials } from '../../shared/scrub-credentials.ts';
import type { MessageRole, MessageUsage, Part, SessionKind } from './schemas.ts';

/** Every session is one stream, `session-<id>`: what a client sees of it is a projection of that stream. */
export const sessionStreamId = (sessionId: string) => `session-${sessionId}`;

export type { MessageRole, MessageUsage, Part, SessionKind, ToolState } from './schemas.ts';

export interface TurnAttachment {
  name: string;
  path: string;
  mime_type: string;
}

export type SessionEvent =
  | {
      type: 'SessionCreated';
      data: {
        sessionId: string;
        title: string;
        model: string;
        system: string;
        kind: SessionKind;
        chatId: string | null;
      };
    }
  | { type: 'SessionForked'; data: { sessionId: string; fromSessionId: string; atRevision: number } }
  | { type: 'SystemUpdated'; data: { system?: string; model?: string; title?: string } }
  | {
      type: 'TurnQueued';
      data: { turnId: string; text: string; attachments: TurnAttachment[]; source: string };
    }
  | { type: 'TurnStarted'; data: { turnId: string } }
  | { type: 'MessageCreated'; data: { messageId: string; turnId: string; role: MessageRole } }
  | { type: 'PartUpdated'; data: { messageId: string; part: Part } }
  | {
      type: 'MessageCompleted';
      data: {
        messageId: string;
        finishReason: string | null;
        usage: MessageUsage | null;
      };
    }
  | { type: 'TurnCompleted'; data: { turnId: string } }
  | { type: 'TurnFailed'; data: { turnId: string; error: string } }
  | { type: 'TurnCancelled'; data: { turnId: string; reason: string } }
  | { type: 'SessionDeleted'; data: { sessionId: string } };

export type SessionCommand =
  | {
      type: 'CreateSession';
      sessionId: string;
      title: string;
      model: string;
      system: string;
      kind: SessionKind;
      chatId: string | null;
    }
  | { type: 'ForkSession'; sessionId: string; fromSessionId: string; atRevision: number }
  | { type: 'UpdateSystem'; system?: string; model?: string; title?: string }
  | { type: 'QueueTurn'; turnId: string; text: string; attachments: TurnAttachment[]; source: string }
  | { type: 'StartTurn'; turnId: string }
  | { type: 'CreateMessage'; messageId: string; turnId: string; role: MessageRole }
  | { type: 'UpdatePart'; messageId: string; part: Part }
  | {
      type: 'CompleteMessage';
      messageId: string;
      finishReason: string | null;
      usage: MessageUsage | null;
    }
  | { type: 'CompleteTurn'; turnId: string }
  | { type: 'FailTurn'; turnId: string; error: string }
  | { type: 'CancelTurn'; turnId: string; reason: string }
  | { type: 'DeleteSession'; sessionId: string };

interface OpenMessage {
  turnId: string;
  /** Tool parts not yet finished: part id → the part. */
  openTools: ReadonlyMap<string, Extract<Part, { type: 'tool' }>>;
}

export interface SessionState {
  exists: boolean;
  /** Turns waiting, oldest first. */
  queue: string[];
  running: string | null;
  messages: ReadonlyMap<string, 'open' | 'completed'>;
  open: ReadonlyMap<string, OpenMessage>;
  turns: ReadonlyMap<string, 'queued' | 'running' | 'completed' | 'failed' | 'cancelled'>;
}

export const SESSION_EVENT_TYPES = [
  'SessionCreated',
  'SessionForked',
  'SystemUpdated',
  'TurnQueued',
  'TurnStarted',
  'MessageCreated',
  'PartUpdated',
  'MessageCompleted',
  'TurnCompleted',
  'TurnFailed',
  'TurnCancelled',
  'SessionDeleted',
] as const satisfies readonly SessionEvent['type'][];

const conflict = (message: string) => new DomainError('conflict', message);

/** A failed or cancelled turn leaves nothing dangling: open tool calls end as errors, open messages complete. */
function closeTurn(
  state: SessionState,
  turnId: string,
  reason: string,
  finishReason: string,
): SessionEvent[] {
  const events: SessionEvent[] = [];
  for (const [messageId, message] of state.open) {
    if (message.turnId !== turnId) continue;
    for (const part of message.openTools.values()) {
      events.push({
        type: 'PartUpdated',
        data: { messageId, part: { ...part, state: 'error', error: reason } },
      });
    }
    events.push({ type: 'MessageCompleted', data: { messageId, finishReason, usage: null } });
  }
  return events;
}

function decide(command: SessionCommand, state: SessionState): SessionEvent[] {
  if (command.type === 'CreateSession') {
    if (state.exists) throw conflict(`session ${command.sessionId} already exists`);
    const { sessionId, title, model, system, kind, chatId } = command;
    return [{ type: 'SessionCreated', data: { sessionId, title, model, system, kind, chatId } }];
  }
  if (!state.exists) throw new DomainError('not_found', 'session does not exist');

  switch (command.type) {
    case 'ForkSession': {
      // Decided on the source's history up to the cut, copied into the fork: a turn the cut caught
      // half-way ends there, in the fork only.
      const { sessionId, fromSessionId, atRevision } = command;
      const reason = `the fork was cut at revision ${atRevision}`;
      const open = [...(state.running ? [state.running] : []), ...state.queue];
      return [
        { type: 'SessionForked', data: { sessionId, fromSessionId, atRevision } },
        ...open.flatMap((turnId): SessionEvent[] => [
          ...closeTurn(state, turnId, reason, 'cancelled'),
          { type: 'TurnCancelled', data: { turnId, reason } },
        ]),
      ];
    }
    case 'UpdateSystem': {
      const { type: _type, ...changes } = command;
      return [{ type: 'SystemUpdated', data: changes }];
    }
    case 'QueueTurn': {
      if (state.turns.has(command.turnId)) throw conflict(`turn ${command.turnId} already exists`);
      const { turnId, text, attachments, source } = command;
      return [{ type: 'TurnQueued', data: { turnId, text, attachments, source } }];
    }
    case 'StartTurn': {
      if (state.running !== null) throw conflict(`turn ${state.running} is still running`);
      if (state.queue[0] !== command.turnId)
        throw conflict(`turn ${command.turnId} is not next in the queue`);
      return [{ type: 'TurnStarted', data: { turnId: command.turnId } }];
    }
    case 'CreateMessage': {
      if (state.running !== command.turnId) throw conflict(`turn ${command.turnId} is not running`);
      if (state.messages.has(command.messageId))
        throw conflict(`message ${command.messageId} already exists`);
      const { messageId, turnId, role } = command;
      return [{ type: 'MessageCreated', data: { messageId, turnId, role } }];
    }
    case 'UpdatePart': {
      if (!state.open.has(command.messageId)) throw conflict(`message ${command.messageId} is not open`);
      const { part } = command;
      const scrubbed =
        part.type === 'tool' && part.error ? { ...part, error: scrubCredentials(part.error) } : part;
      return [{ type: 'PartUpdated', data: { messageId: command.messageId, part: scrubbed } }];
    }
    case 'CompleteMessage': {
      if (!state.open.has(command.messageId)) throw conflict(`message ${command.messageId} is not open`);
      const { messageId, finishReason, usage } = command;
      return [{ type: 'MessageCompleted', data: { messageId, finishReason, usage } }];
    }
    case 'CompleteTurn': {
      if (state.running !== command.turnId) throw conflict(`turn ${command.turnId} is not running`);
      return [
        ...closeTurn(state, command.turnId, 'the turn ended first', 'stop'),
        { type: 'TurnCompleted', data: { turnId: command.turnId } },
      ];
    }
    case 'FailTurn':
    case 'CancelTurn': {
      const status = state.turns.get(command.turnId);
      if (status === undefined) throw new DomainError('not_found', `turn ${command.turnId} does not exist`);
      if (status !== 'queued' && status !== 'running')
        throw conflict(`turn ${command.turnId} has already ended`);
      // An error's text (an upstream's, a tool's) may quote a URL with its credentials: never into the log.
      const failed = command.type === 'FailTurn';
      const reason = scrubCredentials(failed ? command.error : command.reason);
      return [
        ...closeTurn(state, command.turnId, reason, failed ? 'error' : 'cancelled'),
        failed
          ? { type: 'TurnFailed', data: { turnId: command.turnId, error: reason } }
          : { type: 'TurnCancelled', data: { turnId: command.turnId, reason } },
      ];
    }
    case 'DeleteSession': {
      // A turn under way would write to a session no longer there: it must end (or be cancelled) first.
      if (state.running !== null || state.queue.length > 0)
        throw conflict(`session ${command.sessionId} has a turn running or waiting; cancel it first`);
      return [{ type: 'SessionDeleted', data: { sessionId: command.sessionId } }];
    }
    default:
      return unknownCase('command', command);
  }
}

function endTurn(
  state: SessionState,
  turnId: string,
  status: 'completed' | 'failed' | 'cancelled',
): SessionState {
  return {
    ...state,
    queue: state.queue.filter((t) => t !== turnId),
    running: state.running === turnId ? null : state.running,
    turns: new Map(state.turns).set(turnId, status),
  };
}

function evolve(state: SessionState, event: SessionEvent): SessionState {
  switch (event.type) {
    case 'SessionCreated':
    case 'SessionForked':
      return { ...state, exists: true };
    case 'SystemUpdated':
      return state;
    case 'TurnQueued':
      return {
        ...state,
        queue: [...state.queue, event.data.turnId],
        turns: new Map(state.turns).set(event.data.turnId, 'queued'),
      };
    case 'TurnStarted':
      return {
        ...state,
        queue: state.queue.filter((t) => t !== event.data.turnId),
        running: event.data.turnId,
        turns: new Map(state.turns).set(event.data.turnId, 'running'),
      };
    case 'MessageCreated':
      return {
        ...state,
        messages: new Map(state.messages).set(event.data.messageId, 'open'),
        open: new Map(state.open).set(event.data.messageId, {
          turnId: event.data.turnId,
          openTools: new Map(),
        }),
      };
    case 'PartUpdated': {
      const message = state.open.get(event.data.messageId);
      const { part } = event.data;
      if (!message || part.type !== 'tool') return state;
      const openTools = new Map(message.openTools);
      if (part.state === 'pending' || part.state === 'running') openTools.set(part.id, part);
      else openTools.delete(part.id);
      return { ...state, open: new Map(state.open).set(event.data.messageId, { ...message, openTools }) };
    }
    case 'MessageCompleted': {
      const open = new Map(state.open);
      open.delete(event.data.messageId);
      return { ...state, open, messages: new Map(state.messages).set(event.data.messageId, 'completed') };
    }
    case 'TurnCompleted':
      return endTurn(state, event.data.turnId, 'completed');
    case 'TurnFailed':
      return endTurn(state, event.data.turnId, 'failed');
    case 'TurnCancelled':
      return endTurn(state, event.data.turnId, 'cancelled');
    case 'SessionDeleted':
      // Gone for every command after it (a 404, as for a session never created).
      return { ...state, exists: false };
    default:
      return unknownCase('event', event);
  }
}

export const sessionDecider: Decider<SessionCommand, SessionEvent, SessionState> = {
  initialState: () => ({
    exists: false,
    queue: [],
    running: null,
    messages: new Map(),
    open: new Map(),
    turns: new Map(),
  }),
  decide,
  evolve,
};
