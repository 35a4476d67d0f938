import {
  BACKWARDS,
  END,
  type Filter,
  type Position,
  type ReadPosition,
  type RecordedEvent,
  START,
} from '@kurrent/kurrentdb-client';
import type { StoredEvent } from '../types.ts';
import type { KurrentClient } from './client.ts';
import { toStored } from './mapping.ts';
import type { StreamNames } from './names.ts';
import { isAfter, logPosition, positionOf, toPosition } from './positions.ts';

/** Events per `readAll` request while paging. */
const READ_PAGE = 1_000;
/** Events per backward request while looking back through the log or a stream. */
export const SCAN_PAGE = 256;

/**
 * Pages forward through `$all` after position `after` until `limit` of our events pass `accept`. A
 * read from a position includes the event at it, so each page starts at the last one seen and skips
 * it. Positions must be 0 or positions this store returned (a read starts at a record).
 */
export async function readForward(
  client: KurrentClient,
  names: StreamNames,
  after: number,
  limit: number,
  filter: Filter,
  accept: (event: RecordedEvent) => boolean,
): Promise<StoredEvent[]> {
  const result: StoredEvent[] = [];
  let cursor: Position = after <= 0 ? { commit: 0n, prepare: 0n } : toPosition(after);
  let from: ReadPosition = after <= 0 ? START : cursor;
  for (;;) {
    const want = Math.min(limit - result.length, READ_PAGE) + 1;
    let seen = 0;
    let last: Position | undefined;
    for await (const resolved of client.readAll({ fromPosition: from, maxCount: want, filter })) {
      seen++;
      const event = resolved.event;
      if (!event) continue;
      // Other records only page the read: their positions are never handed out.
      const position = logPosition(event);
      last = position;
      if (!isAfter(position, cursor) || !names.isOurs(event) || !accept(event)) continue;
      result.push(toStored(event, names.prefix));
      if (result.length >= limit) return result;
    }
    if (seen < want || last === undefined) return result;
    from = last;
    cursor = last;
  }
}

/** The position of our last event in the log (0: none), looking back from its end. */
export async function headPosition(client: KurrentClient, names: StreamNames): Promise<number> {
  let from: ReadPosition = END;
  for (;;) {
    let seen = 0;
    let last: Position | undefined;
    for await (const resolved of client.readAll({
      direction: BACKWARDS,
      fromPosition: from,
      maxCount: SCAN_PAGE,
      filter: names.ourStreams,
    })) {
      seen++;
      const event = resolved.event;
      if (!event) continue;
      last = logPosition(event);
      if (names.isOurs(event)) return positionOf(event);
    }
    if (seen < SCAN_PAGE || last === undefined) return 0;
    from = last;
  }
}
