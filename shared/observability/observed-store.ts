import type { AppendOptions, AppendResult, EventStore, NewEvent } from '../event-store/types.ts';
import type { MetricsRegistry } from './metrics.ts';
import { tracing } from './tracing.ts';

/**
 * The event store with each append timed (`studio_event_store_append_duration_seconds`) and, when
 * traces are on, a span of its own under the request that made it. Reads pass straight through.
 */
export function observedStore(store: EventStore, metrics: MetricsRegistry): EventStore {
  return {
    kind: store.kind,
    async append(
      streamId: string,
      events: readonly NewEvent[],
      options: AppendOptions,
    ): Promise<AppendResult> {
      const started = performance.now();
      let failed = true;
      try {
        const result = await tracing().span(
          'event_store.append',
          { 'studio.event_store.events': events.length },
          () => store.append(streamId, events, options),
        );
        failed = false;
        return result;
      } finally {
        metrics.append((performance.now() - started) / 1000, failed);
      }
    },
    readStream: (streamId, options) => store.readStream(streamId, options),
    readAll: (options) => store.readAll(options),
    subscribePages: (options) => store.subscribePages(options),
    headPosition: () => store.headPosition(),
    close: () => store.close(),
  };
}
