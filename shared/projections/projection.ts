import type { DomainEvent } from '../decider.ts';
import type { StoredEvent } from '../event-store/types.ts';

/** The stored form of each member of a domain event union, so a `switch` on `type` narrows `data`. */
export type Stored<E extends DomainEvent> =
  E extends DomainEvent<infer T, infer D> ? StoredEvent<T, D> : never;

/**
 * A read model built from the log. `apply` folds one event into the state in place (read models are
 * not deciders: they may be large, and copying them per event would make replay quadratic).
 * Records are keyed by ids in `Map`s, never in plain objects: an id such as `constructor` or
 * `__proto__` must be an id like any other, not a member of `Object.prototype`. The state is
 * snapshotted with the checkpoint through `toSnapshot`/`fromSnapshot` (plain JSON, maps as entry lists).
 */
export interface Projection<State, E extends DomainEvent = DomainEvent> {
  name: string;
  /** Bump when `apply` changes meaning: a stored snapshot of another schema version is discarded and rebuilt. */
  schemaVersion: number;
  handles: readonly E['type'][];
  /**
   * The stream categories its events are in (`streamCategory`), when it folds only those: a runner
   * whose read models all say so reads only those streams, and is not woken by the others.
   */
  categories?: readonly string[];
  initialState(): State;
  apply(state: State, event: Stored<E>): void;
  /**
   * While live, its snapshot is saved at most this often (default: with every other read model's,
   * every 5,000 events or 5 s after a change); always when the runner stops. For a read model whose
   * snapshot is large: a restart replays what came after its last one.
   */
  snapshotEveryMs?: number;
  /**
   * What `toSnapshot` returns holds only values later events never change (copied arrays of records
   * never changed once made), so the runner may serialize it over several turns of the event loop
   * and let requests in between: for a read model of thousands of records.
   */
  serializeInTurns?: boolean;
  /** The state as plain JSON, for a snapshot. */
  toSnapshot(state: State): unknown;
  /** The state again from what `toSnapshot` gave (after a JSON round trip). */
  fromSnapshot(snapshot: unknown): State;
}

export function defineProjection<State, E extends DomainEvent>(
  projection: Projection<State, E>,
): Projection<State, E> {
  return projection;
}

// biome-ignore lint/suspicious/noExplicitAny: a heterogeneous list of projections; each is typed where defined.
export type AnyProjection = Projection<any, any>;
