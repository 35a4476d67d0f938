import type { DomainEvent } from '../decider.ts';
import type { Projection, Stored } from './projection.ts';

/**
 * A read model folded from `events` as the runner would (stream revisions counted per stream, one
 * second apart from 2030-01-01), then read back through its snapshot as a restarted process reads
 * it. For the unit tests of projections.
 */
export function foldThroughSnapshot<State, E extends DomainEvent>(
  projection: Projection<State, E>,
  events: readonly E[],
  streamOf: (event: E) => string,
): State {
  const state = projection.initialState();
  const revisions = new Map<string, number>();
  events.forEach((event, i) => {
    const streamId = streamOf(event);
    const revision = (revisions.get(streamId) ?? -1) + 1;
    revisions.set(streamId, revision);
    const stored = {
      ...event,
      id: `e${i}`,
      streamId,
      revision,
      position: i + 1,
      metadata: { actor: 'admin' },
      createdAt: new Date(Date.UTC(2030, 0, 1, 0, 0, i)).toISOString(),
    } as unknown as Stored<E>;
    if (projection.handles.includes(event.type)) projection.apply(state, stored);
  });
  return projection.fromSnapshot(JSON.parse(JSON.stringify(projection.toSnapshot(state))));
}
