import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../shared/event-store/memory.ts';
import { FailingReads } from '../../shared/event-store/testing.ts';
import type { StoredEvent } from '../../shared/event-store/types.ts';
import { createLogger } from '../../shared/logger.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { MAX_EVENTS_PER_TICK, StreamHub } from './stream-hub.ts';

const ticks = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({ type: 'Tick', data: { n: from + i } }));
const system = { metadata: { actor: 'system' } };

describe('StreamHub', () => {
  it('hands every event to every listener once, in order, from one subscription', async () => {
    const store = new MemoryEventStore();
    const hub = new StreamHub(store, createLogger('silent'));
    const seen: number[][] = [[], [], []];
    const leaves = seen.map((into) =>
      hub.listen('s-1', -1, (batch) => into.push(...batch.map((e) => e.revision))),
    );
    await store.append('s-1', ticks(0, 3), system);
    await waitUntil(() => seen.every((s) => s.length === 3), 'every listener saw three events');
    await store.append('s-1', ticks(3, 2), system);
    await waitUntil(() => seen.every((s) => s.length === 5), 'every listener saw five events');
    expect(seen).toEqual([
      [0, 1, 2, 3, 4],
      [0, 1, 2, 3, 4],
      [0, 1, 2, 3, 4],
    ]);
    for (const leave of leaves) leave();
    hub.close();
  });

  it('hands a burst to every listener as one shared batch', async () => {
    const store = new MemoryEventStore();
    const hub = new StreamHub(store, createLogger('silent'));
    const batches: (readonly StoredEvent[])[][] = [[], []];
    const leaves = batches.map((into) => hub.listen('s-1', -1, (batch) => into.push(batch)));
    await store.append('s-1', ticks(0, 5), system);
    await waitUntil(() => batches.every((b) => b.length > 0), 'every listener got a batch');
    expect(batches[0]).toHaveLength(1);
    expect(batches[0]?.[0]?.map((e) => e.revision)).toEqual([0, 1, 2, 3, 4]);
    expect(batches[1]?.[0]).toBe(batches[0]?.[0]);
    for (const leave of leaves) leave();
    hub.close();
  });

  it('lets the event loop tick between batches of a burst larger than one tick takes', async () => {
    const store = new MemoryEventStore();
    const hub = new StreamHub(store, createLogger('silent'));
    const sizes: number[] = [];
    let delivered = 0;
    const leave = hub.listen('s-1', -1, (batch) => {
      sizes.push(batch.length);
      delivered += batch.length;
    });

    // Events delivered as seen at each tick of the event loop while the burst fans out.
    const atEachTick: number[] = [];
    let watching = true;
    const watch = () => {
      atEachTick.push(delivered);
      if (watching) setImmediate(watch);
    };
    setImmediate(watch);
    const total = 2 * MAX_EVENTS_PER_TICK + 10;
    await store.append('s-1', ticks(0, total), system);
    await waitUntil(() => delivered === total, 'every event was delivered');
    watching = false;

    expect(sizes).toEqual([MAX_EVENTS_PER_TICK, MAX_EVENTS_PER_TICK, 10]);
    expect(atEachTick).toContain(MAX_EVENTS_PER_TICK);
    expect(atEachTick).toContain(2 * MAX_EVENTS_PER_TICK);
    leave();
    hub.close();
  });

  it('stops reading the stream when the last listener leaves', async () => {
    const store = new MemoryEventStore();
    const hub = new StreamHub(store, createLogger('silent'));
    const seen: number[] = [];
    const leave = hub.listen('s-1', -1, (batch) => seen.push(...batch.map((e) => e.revision)));
    await store.append('s-1', ticks(0, 1), system);
    await waitUntil(() => seen.length === 1, 'the listener saw the event');
    leave();
    await store.append('s-1', ticks(1, 1), system);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(seen).toEqual([0]);

    // A new listener starts a new tail from where it asks.
    const again: number[] = [];
    const leaveAgain = hub.listen('s-1', 0, (batch) => again.push(...batch.map((e) => e.revision)));
    await waitUntil(() => again.length === 1, 'the new listener saw the event');
    expect(again).toEqual([1]);
    leaveAgain();
    hub.close();
  });
});

describe('StreamHub across failed reads', () => {
  it('hands every event exactly once, in order, when reads of the stream fail for a while', async () => {
    const reads = new FailingReads((read) => read.kind === 'readStream');
    const store = new MemoryEventStore(reads.hooks);
    const hub = new StreamHub(store, createLogger('silent'), { initialMs: 5, maxMs: 20 });
    const seen: number[] = [];
    const leave = hub.listen('s-1', -1, (batch) => seen.push(...batch.map((e) => e.revision)));
    await store.append('s-1', ticks(0, 3), system);
    await waitUntil(() => seen.length === 3, 'the listener saw three events');

    reads.failing = true;
    await store.append('s-1', ticks(3, 2), system);
    await waitUntil(() => reads.failures >= 3, 'three failed reads');
    expect(hub.health()).toMatchObject({ tails: 1, stalled: 1 });
    expect(hub.health().stalled_since).not.toBeNull();
    await store.append('s-1', ticks(5, 2), system);

    reads.failing = false;
    await waitUntil(() => seen.length >= 7, 'the listener saw seven events');
    await store.append('s-1', ticks(7, 1), system);
    await waitUntil(() => seen.length >= 8, 'the listener saw eight events');
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(hub.health()).toEqual({ tails: 1, stalled: 0, stalled_since: null });
    leave();
    hub.close();
  });
});
