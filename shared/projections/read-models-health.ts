import type { EventStore } from '../event-store/types.ts';
import type { LivenessReport } from './liveness.ts';
import type { ProjectionRunner } from './runner.ts';

const LAG_COUNT_CAP = 10_000;

export interface ProjectionHealth {
  name: string;
  position: number;
  /** Events not applied yet (capped at 10,000); null when the log cannot be read. */
  lag: number | null;
  state: LivenessReport['state'];
  stalled_since: string | null;
}

export interface ReadModelsHealth {
  status: 'ok' | 'degraded';
  event_store: { kind: string; reachable: boolean; head_position: number | null };
  /** The runner that keeps every projection below: they stall and recover together. */
  read_models: LivenessReport & { stale: boolean };
  projections: ProjectionHealth[];
}

/**
 * Where the log and the read models kept from it stand. `degraded` while the log cannot be read
 * or the read models are not following it (stalled, or catching up after an outage). Never throws:
 * a failed read of the log is what it reports.
 */
export async function readModelsHealth(
  events: EventStore,
  runner: ProjectionRunner,
): Promise<ReadModelsHealth> {
  const head = await events.headPosition().catch(() => null);
  const liveness = runner.liveness.report();
  const projections = await Promise.all(
    runner.status().map(async (p) => ({
      name: p.name,
      position: p.position,
      lag: await lagOf(events, p.position, head),
      state: liveness.state,
      stalled_since: liveness.stalled_since,
    })),
  );
  const healthy = head !== null && liveness.state === 'live';
  return {
    status: healthy ? 'ok' : 'degraded',
    event_store: { kind: events.kind, reachable: head !== null, head_position: head },
    read_models: { ...liveness, stale: runner.liveness.isStale() },
    projections,
  };
}

async function lagOf(events: EventStore, position: number, head: number | null): Promise<number | null> {
  if (head === null) return null;
  if (position >= head) return 0;
  return events
    .readAll({ after: position, limit: LAG_COUNT_CAP })
    .then((behind) => behind.length)
    .catch(() => null);
}
