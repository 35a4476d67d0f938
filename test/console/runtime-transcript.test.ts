import { describe, expect, it } from 'vitest';
import {
  emptyTranscript,
  fold,
  queuePosition,
  turnUsage,
} from '../../console/src/runtime/sessions/transcript.ts';
import type { SessionStreamItem } from '../../sdk/types.ts';

let revision = 0;
const event = (type: string, data: Record<string, unknown>): SessionStreamItem => ({
  kind: 'event',
  type,
  data,
  revision: revision++,
  time: '2026-01-01T00:00:00.000Z',
});
const delta = (messageId: string, partId: string, text: string): SessionStreamItem => ({
  kind: 'delta',
  messageId,
  partId,
  delta: text,
});

describe('the transcript folded from a session stream', () => {
  it('shows deltas until the stored part replaces them, and ignores deltas after it', () => {
    revision = 0;
    let t = fold(emptyTranscript(), [
      event('TurnQueued', { turnId: 't1', text: 'hi', attachments: [], source: 'sdk' }),
      event('TurnStarted', { turnId: 't1' }),
      event('MessageCreated', { messageId: 'm1', turnId: 't1', role: 'assistant' }),
      delta('m1', 'p1', 'Echo: '),
      delta('m1', 'p1', 'hi'),
    ]);
    expect(t.messages[0]?.drafts.get('p1')).toBe('Echo: hi');
    expect(t.running).toBe('t1');
    t = fold(t, [
      event('PartUpdated', { messageId: 'm1', part: { id: 'p1', type: 'text', text: 'Echo: hi' } }),
      delta('m1', 'p1', ' late'),
    ]);
    expect(t.messages[0]?.drafts.size).toBe(0);
    expect(t.messages[0]?.parts).toEqual([{ id: 'p1', type: 'text', text: 'Echo: hi' }]);
  });

  it('folds each stored revision once (a resumed stream repeats nothing) and leaves the old state alone', () => {
    revision = 0;
    const created = event('MessageCreated', { messageId: 'm1', turnId: 't1', role: 'user' });
    const before = fold(emptyTranscript(), [created]);
    const after = fold(before, [created, event('MessageCompleted', { messageId: 'm1' })]);
    expect(after.messages).toHaveLength(1);
    expect(after.messages[0]?.completed).toBe(true);
    expect(before.messages[0]?.completed).toBe(false);
    expect(after.revision).toBe(1);
  });

  it('gives queued turns their place behind the running one, as the prompt route does', () => {
    revision = 0;
    const t = fold(emptyTranscript(), [
      event('TurnQueued', { turnId: 'a', text: 'a' }),
      event('TurnQueued', { turnId: 'b', text: 'b' }),
      event('TurnQueued', { turnId: 'c', text: 'c' }),
      event('TurnStarted', { turnId: 'a' }),
      event('TurnCancelled', { turnId: 'c', reason: 'forked' }),
    ]);
    expect(t.queue).toEqual(['b']);
    expect(queuePosition(t, 'b')).toBe(2);
    expect(t.turns.get('c')).toMatchObject({ state: 'cancelled', error: 'forked' });
    const done = fold(t, [event('TurnFailed', { turnId: 'a', error: 'upstream down' })]);
    expect(done.running).toBeNull();
    expect(queuePosition(done, 'b')).toBe(1);
    expect(done.turns.get('a')).toMatchObject({ state: 'failed', error: 'upstream down' });
  });

  it("sums a turn's tokens over its model calls and times it from its first call to its last answer", () => {
    const at = (time: string, item: SessionStreamItem) => ({ ...item, time }) as SessionStreamItem;
    revision = 0;
    const t = fold(emptyTranscript(), [
      event('TurnQueued', { turnId: 't1', text: 'hi' }),
      event('TurnStarted', { turnId: 't1' }),
      at('2026-01-01T00:00:01.000Z', event('MessageCreated', { messageId: 'u', turnId: 't1', role: 'user' })),
      at('2026-01-01T00:00:01.000Z', event('MessageCompleted', { messageId: 'u', usage: null })),
      at(
        '2026-01-01T00:00:01.000Z',
        event('MessageCreated', { messageId: 'a1', turnId: 't1', role: 'assistant' }),
      ),
      at(
        '2026-01-01T00:00:02.000Z',
        event('MessageCompleted', { messageId: 'a1', usage: { inputTokens: 10, outputTokens: 3 } }),
      ),
      at(
        '2026-01-01T00:00:02.000Z',
        event('MessageCreated', { messageId: 'a2', turnId: 't1', role: 'assistant' }),
      ),
    ]);
    // The second call is under way: its tokens are not in yet, the latency is up to the first answer.
    expect(turnUsage(t.messages)).toEqual({ inputTokens: 10, outputTokens: 3, latencyMs: 1000 });
    const done = fold(t, [
      at(
        '2026-01-01T00:00:03.500Z',
        event('MessageCompleted', { messageId: 'a2', usage: { inputTokens: 20, outputTokens: 5 } }),
      ),
    ]);
    expect(turnUsage(done.messages)).toEqual({ inputTokens: 30, outputTokens: 8, latencyMs: 2500 });
    expect(turnUsage(done.messages.filter((m) => m.role === 'user'))).toEqual({
      inputTokens: 0,
      outputTokens: 0,
      latencyMs: undefined,
    });
  });

  it("sums a turn's cost over its model calls, and has none when a call's cost was not recorded", () => {
    revision = 0;
    const call = (id: string, usage: Record<string, number>) => [
      event('MessageCreated', { messageId: id, turnId: 't1', role: 'assistant' }),
      event('MessageCompleted', { messageId: id, usage }),
    ];
    const t = fold(emptyTranscript(), [
      event('TurnQueued', { turnId: 't1', text: 'hi' }),
      event('TurnStarted', { turnId: 't1' }),
      event('MessageCreated', { messageId: 'u', turnId: 't1', role: 'user' }),
      event('MessageCompleted', { messageId: 'u', usage: null }),
      ...call('a1', { inputTokens: 10, outputTokens: 3, costUsd: 0.0001 }),
      ...call('a2', { inputTokens: 20, outputTokens: 5, costUsd: 0.0002 }),
    ]);
    // Summed in whole micro-dollars: 0.0001 + 0.0002 in floats would be 0.00030000000000000003.
    expect(turnUsage(t.messages)).toMatchObject({ inputTokens: 30, outputTokens: 8, costUsd: 0.0003 });
    expect(t.messages[1]?.usage).toEqual({ inputTokens: 10, outputTokens: 3, costUsd: 0.0001 });
    // A free model's call costs 0, which is a cost; a call recorded without one leaves the turn's out.
    const free = fold(emptyTranscript(), call('f1', { inputTokens: 1, outputTokens: 1, costUsd: 0 }));
    expect(turnUsage(free.messages).costUsd).toBe(0);
    const unpriced = fold(t, call('a3', { inputTokens: 1, outputTokens: 1 }));
    expect(turnUsage(unpriced.messages)).toMatchObject({
      inputTokens: 31,
      outputTokens: 9,
      costUsd: undefined,
    });
  });
});
