import type { EventStore } from '../event-store/types.ts';
import type { CheckpointStore } from './checkpoints.ts';
import type { AnyProjection } from './projection.ts';

export interface RebuildProgress {
  projection: string;
  events: number;
  /** 0..1, by position through the log. */
  fraction: number;
}

export interface RebuildResult {
  projection: string;
  events: number;
  position: number;
  ms: number;
}

const PAGE = 5_000;

/** Reset and replay: folds every event the projection handles from the start of the log, then saves. */
export async function rebuildProjection(
  store: EventStore,
  checkpoints: CheckpointStore,
  projection: AnyProjection,
  onProgress?: (progress: RebuildProgress) => void,
): Promise<RebuildResult> {
  const started = performance.now();
  const head = await store.headPosition();
  const state = projection.initialState();
  let after = 0;
  let events = 0;
  const first = (await store.readAll({ limit: 1 }))[0]?.position ?? 0;
  const fraction = (position: number) =>
    head <= first ? 1 : Math.min(1, Math.max(0, (position - first) / (head - first)));
  for (;;) {
    const page = await store.readAll({ after, limit: PAGE, types: projection.handles });
    for (const event of page) projection.apply(state, event);
    events += page.length;
    after = page.at(-1)?.position ?? after;
    onProgress?.({ projection: projection.name, events, fraction: fraction(after) });
    if (page.length < PAGE) break;
  }
  const position = Math.max(head, after);
  await checkpoints.save(projection.name, {
    schemaVersion: projection.schemaVersion,
    position,
    state: projection.toSnapshot(state),
  });
  onProgress?.({ projection: projection.name, events, fraction: 1 });
  return { projection: projection.name, events, position, ms: performance.now() - started };
}
