import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from './memory.ts';
import { resubscribing, resubscribingPages } from './resubscribe.ts';
import { eventsOf } from './subscription.ts';
import { type EventStore, isCaughtUp, type SubscriptionPage } from './types.ts';

const META = { actor: 'test' };

async function storeOf(count: number): Promise<MemoryEventStore> {
  const store = new MemoryEventStore();
  for (let i = 0; i < count; i++)
    await store.append(`thing-${i % 2}`, [{ type: 'Thing', data: { i } }], { metadata: META });
  return store;
}

/** `store`, whose pages fail once, after `failAfter` of them, and come again from the start of the log once. */
function flaky(store: MemoryEventStore, failAfter: number): EventStore {
  let failed = false;
  return new Proxy(store, {
    get(target, property) {
      if (property !== 'subscribePages') return Reflect.get(target, property, target);
      return (options: Parameters<EventStore['subscribePages']>[0]) =>
        (async function* (): AsyncGenerator<SubscriptionPage> {
          let handed = 0;
          // After the failure it starts again from the very start: what the consumer had comes again.
          const pages = target.subscribePages({ ...options, after: failed ? 0 : options.after });
          for await (const page of pages) {
            if (!failed && !isCaughtUp(page) && handed++ === failAfter) {
              failed = true;
              throw new Error('connection reset');
            }
            yield page;
          }
        })();
    },
  });
}

describe('resubscribingPages', () => {
  it('after a failed read hands on every event once, in order, none it already gave', async () => {
    const store = await storeOf(7);
    const controller = new AbortController();
    const failures: number[] = [];
    const positions: number[] = [];
    const caughtUp: number[] = [];
    for await (const page of resubscribingPages(flaky(store, 1), {
      signal: controller.signal,
      batchSize: 3,
      retry: { initialMs: 1, maxMs: 1 },
      onFailure: ({ after }) => failures.push(after),
    })) {
      if (isCaughtUp(page)) {
        caughtUp.push(page.position);
        break;
      }
      expect(page.events.length).toBeGreaterThan(0);
      positions.push(...page.events.map((e) => e.position));
    }
    controller.abort();
    expect(positions).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(failures).toEqual([3]);
    expect(caughtUp).toEqual([7]);
  });

  it('one event at a time (`resubscribing`): each once, in order, across a failed read', async () => {
    const store = await storeOf(12);
    const controller = new AbortController();
    const positions: number[] = [];
    for await (const item of resubscribing(flaky(store, 2), {
      signal: controller.signal,
      batchSize: 5,
      after: 2,
      retry: { initialMs: 1, maxMs: 1 },
    })) {
      if (isCaughtUp(item)) break;
      positions.push(item.position);
    }
    controller.abort();
    expect(positions).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });
});

describe('eventsOf', () => {
  it('hands on no event once the signal aborts, even in the middle of a page', async () => {
    const store = await storeOf(6);
    const controller = new AbortController();
    const seen: number[] = [];
    for await (const item of eventsOf(
      store.subscribePages({ signal: controller.signal }),
      controller.signal,
    )) {
      if (isCaughtUp(item)) continue;
      seen.push(item.position);
      if (item.position === 2) controller.abort();
    }
    expect(seen).toEqual([1, 2]);
  });
});
