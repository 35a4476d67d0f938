import { describe, expect, it } from 'vitest';
import { ChangeNotifier } from './change-notifier.ts';
import { catchUpThenLive } from './subscription.ts';
import type { StoredEvent } from './types.ts';

const stored = (position: number): StoredEvent => ({
  id: `e${position}`,
  streamId: 's',
  revision: position - 1,
  position,
  type: 'Thing',
  data: {},
  metadata: { actor: 'system' },
  createdAt: new Date(0).toISOString(),
});

describe('catchUpThenLive', () => {
  it('reads the next batch while the current one is being consumed, and delivers each event once', async () => {
    const log = Array.from({ length: 7 }, (_, i) => stored(i + 1));
    const reads: number[] = [];
    const controller = new AbortController();
    const items = catchUpThenLive(
      { signal: controller.signal, batchSize: 3 },
      async (after, limit) => {
        reads.push(after);
        return log.filter((e) => e.position > after).slice(0, limit);
      },
      new ChangeNotifier(),
    );
    const delivered: unknown[] = [];
    for await (const page of items) {
      if (page.type === '$caught_up') {
        delivered.push(page);
        break;
      }
      // A full batch is handed on only after the read of the next one began.
      if (page.events[0]?.position === 1) expect(reads).toEqual([0, 3]);
      delivered.push(page.events.map((e) => e.position));
    }
    controller.abort();
    expect(delivered).toEqual([[1, 2, 3], [4, 5, 6], [7], { type: '$caught_up', position: 7 }]);
    expect(reads).toEqual([0, 3, 6]);
  });

  it('gives the event loop back while it hands on a full batch, so the next one keeps arriving', async () => {
    const log = Array.from({ length: 1_500 }, (_, i) => stored(i + 1));
    const controller = new AbortController();
    const items = catchUpThenLive(
      { signal: controller.signal, batchSize: 1_000 },
      async (after, limit) => log.filter((e) => e.position > after).slice(0, limit),
      new ChangeNotifier(),
    );
    // What the loop runs next (a socket's data, another request) runs while the first batch is handed on.
    let deliveredWhenLoopTurned: number | undefined;
    let delivered = 0;
    setImmediate(() => {
      deliveredWhenLoopTurned = delivered;
    });
    for await (const page of items) {
      if (page.type === '$caught_up') break;
      delivered += page.events.length;
    }
    controller.abort();
    expect(delivered).toBe(1_500);
    expect(deliveredWhenLoopTurned).toBeGreaterThan(0);
    expect(deliveredWhenLoopTurned).toBeLessThan(1_000);
  });
});
