import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../shared/event-store/memory.ts';
import { FailingReads } from '../../shared/event-store/testing.ts';
import type { StoredEvent } from '../../shared/event-store/types.ts';
import { createLogger } from '../../shared/logger.ts';
import { MemoryCheckpointStore } from '../../shared/projections/checkpoints.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { EffectDispatcher } from './effects.ts';
import type { PluginManager } from './plugins/manager.ts';

const system = { metadata: { actor: 'system' } };

describe('EffectDispatcher', () => {
  it('dispatches every session event once, in order, across failed reads of the log', async () => {
    const reads = new FailingReads();
    const store = new MemoryEventStore(reads.hooks);
    const dispatched: number[] = [];
    const plugins = {
      dispatch: async (event: StoredEvent) => void dispatched.push(event.data as number),
    } as unknown as PluginManager;
    const effects = new EffectDispatcher(
      store,
      new MemoryCheckpointStore(),
      plugins,
      createLogger('silent'),
      {
        initialMs: 5,
        maxMs: 20,
      },
    );
    await effects.start();
    try {
      await store.append('session-a', [{ type: 'Tick', data: 1 }], system);
      await waitUntil(() => dispatched.length === 1, 'the first event');

      reads.failing = true;
      await store.append('session-a', [{ type: 'Tick', data: 2 }], system);
      await waitUntil(() => reads.failures >= 3, 'three failed reads');
      await store.append('session-a', [{ type: 'Tick', data: 3 }], system);
      reads.failing = false;

      await waitUntil(() => dispatched.length >= 3, 'the events appended while reads failed');
      await store.append('session-a', [{ type: 'Tick', data: 4 }], system);
      await waitUntil(() => dispatched.length >= 4, 'an event after the outage');
      expect(dispatched).toEqual([1, 2, 3, 4]);
    } finally {
      await effects.stop();
    }
  });
});
