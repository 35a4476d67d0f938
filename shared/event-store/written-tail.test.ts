import { describe, expect, it } from 'vitest';
import type { StoredEvent } from './types.ts';
import { WrittenTail } from './written-tail.ts';

const event = (position: number): StoredEvent => ({
  id: `e-${position}`,
  streamId: 's',
  revision: position,
  position,
  type: 'Noted',
  data: {},
  metadata: { actor: 'test' },
  createdAt: '2026-11-24T00:00:00.000Z',
});
const positions = (events: StoredEvent[] | undefined) => events?.map((e) => e.position);

describe('the tail of events a sole writer wrote', () => {
  const added = (tail: WrittenTail, ...events: [StoredEvent, number][]) => {
    for (const [e, size] of events) tail.add(e, size);
  };

  it('answers reads after its start, from the first event past the cursor, up to the limit', () => {
    const tail = new WrittenTail(10);
    added(tail, [event(12), 10], [event(15), 10], [event(16), 10], [event(20), 10]);
    expect(positions(tail.read(10))).toEqual([12, 15, 16, 20]);
    expect(positions(tail.read(12, 2))).toEqual([15, 16]);
    expect(positions(tail.read(13))).toEqual([15, 16, 20]);
    expect(positions(tail.read(20))).toEqual([]);
    expect(tail.read(9)).toBeUndefined();
  });

  it('lets the older events go past twice what it keeps, and no longer answers reads from before', () => {
    const tail = new WrittenTail(0, { events: 2, bytes: 1_000 });
    added(tail, [event(1), 10], [event(2), 10], [event(3), 10]);
    expect(positions(tail.read(0))).toEqual([1, 2, 3]);
    added(tail, [event(4), 10]);
    expect(tail.read(0)).toBeUndefined();
    expect(tail.read(1)).toBeUndefined();
    expect(positions(tail.read(2))).toEqual([3, 4]);
  });

  it('holds large events briefly: past twice its bytes, it keeps only what fits in them', () => {
    const tail = new WrittenTail(0, { events: 100, bytes: 1_000 });
    added(tail, [event(1), 400], [event(2), 400], [event(3), 400]);
    expect(positions(tail.read(0))).toEqual([1, 2, 3]);
    added(tail, [event(4), 900]);
    expect(tail.read(2)).toBeUndefined();
    expect(positions(tail.read(3))).toEqual([4]);
  });
});
