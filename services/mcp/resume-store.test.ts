import { describe, expect, it } from 'vitest';
import { ResumeStore } from './resume-store.ts';

const note = (n: number) => ({ jsonrpc: '2.0' as const, method: 'notifications/message', params: { n } });

describe('ResumeStore', () => {
  it('replays what its stream sent after an event id, and nothing of other streams', async () => {
    const store = new ResumeStore();
    const first = await store.storeEvent('_GET_stream', note(1));
    await store.storeEvent('post-1', note(2));
    const third = await store.storeEvent('_GET_stream', note(3));
    expect(await store.getStreamIdForEventId(first)).toBe('_GET_stream');
    const sent: [string, unknown][] = [];
    const stream = await store.replayEventsAfter(first, {
      send: async (id, message) => {
        sent.push([id, message]);
      },
    });
    expect(stream).toBe('_GET_stream');
    expect(sent).toEqual([[third, note(3)]]);
  });

  it('keeps at most its bound of events, the oldest forgotten first', async () => {
    const store = new ResumeStore(2);
    const first = await store.storeEvent('s', note(1));
    await store.storeEvent('s', note(2));
    await store.storeEvent('s', note(3));
    const sent: unknown[] = [];
    await store.replayEventsAfter(first, {
      send: async (_id, message) => {
        sent.push(message);
      },
    });
    expect(sent).toEqual([note(2), note(3)]);
    const none: unknown[] = [];
    await store.replayEventsAfter('s:3', { send: async (_id, message) => void none.push(message) });
    expect(none).toEqual([]);
  });
});
