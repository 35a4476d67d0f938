import { type EventStore, isCaughtUp } from '../event-store/types.ts';
import type { CheckpointStore } from './checkpoints.ts';
import type { AnyProjection } from './projection.ts';

export interface RebuildProgress {
  /** Events read from the log so far. */
  events: number;
  /** 0..1, by position through the log. */
  fraction: number;
}

export interface RebuildResult {
  projection: string;
  /** Events this projection handled. */
  events: number;
  position: number;
  ms: number;
}

export interface RebuildReport {
  /** Events read from the log. */
  events: number;
  /** The position every rebuilt checkpoint was saved at. */
  position: number;
  ms: number;
  /** Events each projection handled, in the order given. */
  projections: { name: string; events: number }[];
}

const PAGE = 5_000;
/** Progress is reported every this many events (and at the end). */
const PROGRESS_EVERY = 5_000;

/**
 * Reset and replay: one pass over the log from its start, folding each event into every chosen
 * projection that handles its type, then one checkpoint per projection. One pass rather than one
 * per projection: a read filtered by type still walks the log's position order past every event of
 * other types, so N projections cost N walks of the whole log.
 */
export async function rebuildProjections(
  store: EventStore,
  checkpoints: CheckpointStore,
  projections: readonly AnyProjection[],
  onProgress?: (progress: RebuildProgress) => void,
): Promise<RebuildReport> {
  const started = performance.now();
  const head = await store.headPosition();
  const slots = projections.map((projection) => ({
    projection,
    state: projection.initialState(),
    events: 0,
  }));
  const byType = new Map<string, typeof slots>();
  for (const slot of slots) {
    for (const type of slot.projection.handles) byType.set(type, [...(byType.get(type) ?? []), slot]);
  }
  const first = (await store.readAll({ limit: 1 }))[0]?.position ?? 0;
  const fraction = (position: number) =>
    head <= first ? 1 : Math.min(1, Math.max(0, (position - first) / (head - first)));

  const controller = new AbortController();
  let after = 0;
  let read = 0;
  try {
    for await (const page of store.subscribePages({ signal: controller.signal, batchSize: PAGE })) {
      if (isCaughtUp(page)) break;
      for (const event of page.events) {
        for (const slot of byType.get(event.type) ?? []) {
          slot.projection.apply(slot.state, event);
          slot.events++;
        }
        after = event.position;
        if (++read % PROGRESS_EVERY === 0) onProgress?.({ events: read, fraction: fraction(after) });
      }
    }
  } finally {
    controller.abort();
  }

  const position = Math.max(head, after);
  for (const slot of slots) {
    await checkpoints.save(slot.projection.name, {
      schemaVersion: slot.projection.schemaVersion,
      position,
      state: slot.projection.toSnapshot(slot.state),
    });
  }
  onProgress?.({ events: read, fraction: 1 });
  return {
    events: read,
    position,
    ms: performance.now() - started,
    projections: slots.map((slot) => ({ name: slot.projection.name, events: slot.events })),
  };
}

/** `rebuildProjections` for one projection. */
export async function rebuildProjection(
  store: EventStore,
  checkpoints: CheckpointStore,
  projection: AnyProjection,
  onProgress?: (progress: RebuildProgress) => void,
): Promise<RebuildResult> {
  const report = await rebuildProjections(store, checkpoints, [projection], onProgress);
  const { position, ms } = report;
  return { projection: projection.name, events: report.projections[0]?.events ?? 0, position, ms };
}
