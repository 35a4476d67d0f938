import type { EventStore } from '../event-store/types.ts';
import type { ProjectionRunner } from '../projections/runner.ts';
import type { MetricsRegistry } from './metrics.ts';

/**
 * `studio_projection_lag_positions{projection}`: how far each read model is behind the log's head,
 * read at each scrape. Positions, not events: the SQL stores' positions have gaps, so this is an
 * upper bound on the events still to apply (0 is exact). A head that cannot be read reports nothing.
 */
export function watchProjectionLag(
  metrics: MetricsRegistry,
  runner: ProjectionRunner,
  events: EventStore,
): void {
  metrics.sampled(
    'studio_projection_lag_positions',
    'Log positions between the head of the log and what each read model has applied',
    'projection',
    async () => {
      const head = await events.headPosition().catch(() => undefined);
      if (head === undefined) return [];
      return runner
        .status()
        .map(({ name, position }): [string, number] => [name, Math.max(0, head - position)]);
    },
  );
}
