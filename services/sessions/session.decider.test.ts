import { describe, it } from 'vitest';
import { deciderSpec } from '../../shared/decider-spec.ts';
import { type Part, type SessionEvent, sessionDecider, type ToolState } from './session.ts';

const spec = deciderSpec(sessionDecider);
const created: SessionEvent = {
  type: 'SessionCreated',
  data: { sessionId: 's1', title: 't', model: 'dev/echo', system: '', kind: 'api', chatId: null },
};
const queued = (turnId: string): SessionEvent => ({
  type: 'TurnQueued',
  data: { turnId, text: 'hi', attachments: [], source: 'api' },
});
const started = (turnId: string): SessionEvent => ({ type: 'TurnStarted', data: { turnId } });
const message = (messageId: string, turnId = 't1'): SessionEvent => ({
  type: 'MessageCreated',
  data: { messageId, turnId, role: 'assistant' },
});
const tool = (state: ToolState): Part => ({
  id: 'p1',
  type: 'tool',
  call_id: 'c1',
  tool: 'files__read',
  state,
  input: { path: 'a' },
});
const part = (messageId: string, p: Part): SessionEvent => ({
  type: 'PartUpdated',
  data: { messageId, part: p },
});

describe('session decider', () => {
  it('deletes an idle session, after which it is gone for every command; not while a turn waits or runs', () => {
    const deleted: SessionEvent = { type: 'SessionDeleted', data: { sessionId: 's1' } };
    spec.given([created]).when({ type: 'DeleteSession', sessionId: 's1' }).thenEmits([deleted]);
    spec.given([created, deleted]).when({ type: 'DeleteSession', sessionId: 's1' }).thenFails('not_found');
    spec
      .given([created, deleted])
      .when({ type: 'QueueTurn', turnId: 't1', text: 'hi', attachments: [], source: 'api' })
      .thenFails('not_found');
    spec
      .given([created, queued('t1')])
      .when({ type: 'DeleteSession', sessionId: 's1' })
      .thenFails('conflict');
    spec
      .given([created, queued('t1'), started('t1')])
      .when({ type: 'DeleteSession', sessionId: 's1' })
      .thenFails('conflict');
    spec
      .given([created, queued('t1'), started('t1'), { type: 'TurnCompleted', data: { turnId: 't1' } }])
      .when({ type: 'DeleteSession', sessionId: 's1' })
      .thenEmits([deleted]);
  });

  it('creates a session once', () => {
    spec
      .given([])
      .when({
        type: 'CreateSession',
        sessionId: 's1',
        title: 't',
        model: 'dev/echo',
        system: '',
        kind: 'api',
        chatId: null,
      })
      .thenEmits([created]);
    spec
      .given([created])
      .when({
        type: 'CreateSession',
        sessionId: 's1',
        title: 't',
        model: 'm',
        system: '',
        kind: 'api',
        chatId: null,
      })
      .thenFails('conflict');
  });

  it('commands on a session that does not exist are not_found', () => {
    spec
      .given([])
      .when({ type: 'QueueTurn', turnId: 't1', text: 'x', attachments: [], source: 'api' })
      .thenFails('not_found');
  });

  it('turns start one at a time, in the order they were queued', () => {
    spec
      .given([created, queued('t1'), queued('t2')])
      .when({ type: 'StartTurn', turnId: 't2' })
      .thenFails('conflict', /not next/);
    spec
      .given([created, queued('t1'), queued('t2')])
      .when({ type: 'StartTurn', turnId: 't1' })
      .thenEmits([started('t1')]);
    spec
      .given([created, queued('t1'), queued('t2'), started('t1')])
      .when({ type: 'StartTurn', turnId: 't2' })
      .thenFails('conflict', /still running/);
    spec
      .given([
        created,
        queued('t1'),
        queued('t2'),
        started('t1'),
        { type: 'TurnCompleted', data: { turnId: 't1' } },
      ])
      .when({ type: 'StartTurn', turnId: 't2' })
      .thenEmits([started('t2')]);
  });

  it('messages belong to the running turn; parts go to open messages only', () => {
    spec
      .given([created, queued('t1')])
      .when({ type: 'CreateMessage', messageId: 'm1', turnId: 't1', role: 'assistant' })
      .thenFails('conflict');
    spec
      .given([created, queued('t1'), started('t1'), message('m1')])
      .when({ type: 'UpdatePart', messageId: 'm1', part: { id: 'p', type: 'text', text: 'hello' } })
      .thenEmits([part('m1', { id: 'p', type: 'text', text: 'hello' })]);
    spec
      .given([
        created,
        queued('t1'),
        started('t1'),
        message('m1'),
        { type: 'MessageCompleted', data: { messageId: 'm1', finishReason: 'stop', usage: null } },
      ])
      .when({ type: 'UpdatePart', messageId: 'm1', part: { id: 'p', type: 'text', text: 'late' } })
      .thenFails('conflict');
  });

  it('a failed turn ends its pending tool calls as errors and completes its open messages', () => {
    spec
      .given([created, queued('t1'), started('t1'), message('m1'), part('m1', tool('running'))])
      .when({ type: 'FailTurn', turnId: 't1', error: 'upstream down' })
      .thenEmits([
        part('m1', { ...tool('running'), state: 'error', error: 'upstream down' } as Part),
        { type: 'MessageCompleted', data: { messageId: 'm1', finishReason: 'error', usage: null } },
        { type: 'TurnFailed', data: { turnId: 't1', error: 'upstream down' } },
      ]);
  });

  it('error texts reach the events with credentials scrubbed (a URL password, a token parameter)', () => {
    const leaky = 'POST https://bot:hunter22@hooks.example/x?token=abc123 failed';
    const scrubbed = 'POST https://***@hooks.example/x?token=*** failed';
    spec
      .given([created, queued('t1'), started('t1'), message('m1'), part('m1', tool('running'))])
      .when({
        type: 'UpdatePart',
        messageId: 'm1',
        part: { ...tool('running'), state: 'error', error: leaky } as Part,
      })
      .thenEmits([part('m1', { ...tool('running'), state: 'error', error: scrubbed } as Part)]);
    spec
      .given([created, queued('t1'), started('t1'), message('m1'), part('m1', tool('running'))])
      .when({ type: 'FailTurn', turnId: 't1', error: leaky })
      .thenEmits([
        part('m1', { ...tool('running'), state: 'error', error: scrubbed } as Part),
        { type: 'MessageCompleted', data: { messageId: 'm1', finishReason: 'error', usage: null } },
        { type: 'TurnFailed', data: { turnId: 't1', error: scrubbed } },
      ]);
  });

  it('a finished tool call is not touched when the turn is cancelled', () => {
    spec
      .given([
        created,
        queued('t1'),
        started('t1'),
        message('m1'),
        part('m1', tool('running')),
        part('m1', tool('completed')),
      ])
      .when({ type: 'CancelTurn', turnId: 't1', reason: 'stopped by the user' })
      .thenEmits([
        { type: 'MessageCompleted', data: { messageId: 'm1', finishReason: 'cancelled', usage: null } },
        { type: 'TurnCancelled', data: { turnId: 't1', reason: 'stopped by the user' } },
      ]);
  });

  it('a queued turn can be cancelled before it starts, and the next one then comes first', () => {
    spec
      .given([created, queued('t1'), queued('t2')])
      .when({ type: 'CancelTurn', turnId: 't1', reason: 'r' })
      .thenEmits([{ type: 'TurnCancelled', data: { turnId: 't1', reason: 'r' } }]);
    spec
      .given([
        created,
        queued('t1'),
        queued('t2'),
        { type: 'TurnCancelled', data: { turnId: 't1', reason: 'r' } },
      ])
      .when({ type: 'StartTurn', turnId: 't2' })
      .thenEmits([started('t2')]);
  });

  it('an ended turn cannot end again', () => {
    spec
      .given([created, queued('t1'), started('t1'), { type: 'TurnCompleted', data: { turnId: 't1' } }])
      .when({ type: 'FailTurn', turnId: 't1', error: 'x' })
      .thenFails('conflict');
    spec.given([created]).when({ type: 'CancelTurn', turnId: 'nope', reason: 'x' }).thenFails('not_found');
  });

  it('completing a turn closes what is still open', () => {
    spec
      .given([created, queued('t1'), started('t1'), message('m1')])
      .when({ type: 'CompleteTurn', turnId: 't1' })
      .thenEmits([
        { type: 'MessageCompleted', data: { messageId: 'm1', finishReason: 'stop', usage: null } },
        { type: 'TurnCompleted', data: { turnId: 't1' } },
      ]);
  });
});
