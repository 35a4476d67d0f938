import type { Position, RecordedEvent } from '@kurrent/kurrentdb-client';

/**
 * Positions are commit positions in the transaction log, as numbers. Every event appended through
 * gRPC is its own implicit transaction record, so its commit and prepare positions are equal and
 * unique; an event where they differ (an explicit transaction of the retired TCP client) is refused
 * rather than mis-ordered. They are byte offsets: exact as numbers below 2^53, checked on every read.
 */

/** Positions the client reports for "none" (-1 read as an unsigned 64-bit number) and beyond. */
export const NO_POSITION = 2n ** 63n;

/** The event's place in the log, as the server reports it. */
export function logPosition(event: RecordedEvent): Position {
  const position: Position | undefined = event.position;
  if (!position || position.commit < 0n || position.commit >= NO_POSITION) {
    throw new Error(
      `KurrentDB returned event ${event.id} of ${event.streamId} without its log position (KurrentDB 22.6 or later is required)`,
    );
  }
  return position;
}

export function isAfter(position: Position, cursor: Position): boolean {
  return (
    position.commit > cursor.commit ||
    (position.commit === cursor.commit && position.prepare > cursor.prepare)
  );
}

/** The commit position of one of our events, which must equal its prepare position. */
export function commitOf(event: RecordedEvent): bigint {
  const position = logPosition(event);
  if (position.commit !== position.prepare) {
    throw new Error(
      `event ${event.id} of ${event.streamId} was written in an explicit transaction (commit ${position.commit}, prepare ${position.prepare}); Studio's positions need one record per event`,
    );
  }
  return position.commit;
}

export function positionOf(event: RecordedEvent): number {
  const commit = commitOf(event);
  if (commit > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`log position ${commit} of event ${event.id} is beyond 2^53: not exact as a number`);
  }
  return Number(commit);
}

export function toPosition(position: number): Position {
  if (!Number.isSafeInteger(position)) throw new RangeError(`${position} is not a log position`);
  return { commit: BigInt(position), prepare: BigInt(position) };
}
