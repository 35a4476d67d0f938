import { randomUUID } from 'node:crypto';
import {
  BACKWARDS,
  END,
  NO_STREAM as KURRENT_NO_STREAM,
  type RecordedEvent,
  START,
} from '@kurrent/kurrentdb-client';
import { type AppendResult, DuplicateEventId } from '../types.ts';
import { isWrongExpectedVersion, type KurrentClient, readStreamRaw } from './client.ts';
import { isRecord } from './mapping.ts';
import { RESERVATION_TYPE, type StreamNames } from './names.ts';
import { commitOf, NO_POSITION, positionOf } from './positions.ts';
import { SCAN_PAGE } from './reads.ts';

/** Reservations written at once for one append. */
const RESERVE_CONCURRENCY = 128;

/** What reserving an append's ids found. */
export interface Claim {
  /** This call created every reservation, so none of the ids can be stored yet. */
  fresh: boolean;
  /** A log position no event of these ids can be stored before. */
  since: bigint;
}

/**
 * Event ids are unique across the whole store, as the port requires, through one reservation stream
 * per id (`<prefix>studio-event-id-<uuid>`, created with NO_STREAM, naming its owner) written before
 * the events themselves. A re-append of ids already reserved for the same stream looks for them in
 * that stream (from its end back to the reservation) and answers the original result. Costs: one
 * extra small append per event, and an id whose append failed stays bound to the stream it was
 * first tried on.
 */
export class IdReservations {
  constructor(
    private readonly client: KurrentClient,
    private readonly names: StreamNames,
  ) {}

  /** Reserves every id for `streamId`; an id reserved for another stream is a DuplicateEventId. */
  async claim(streamId: string, ids: readonly string[]): Promise<Claim> {
    const outcomes = await mapLimit(ids, RESERVE_CONCURRENCY, (id) =>
      this.#claimOne(streamId, id).then(
        (claimed) => ({ claimed }),
        (error: unknown) => ({ error }),
      ),
    );
    let fresh = true;
    let since: bigint | undefined;
    for (const outcome of outcomes) {
      // The first failure in batch order, so a clash names the id the caller re-used.
      if ('error' in outcome) throw outcome.error;
      fresh &&= outcome.claimed.fresh;
      if (since === undefined || outcome.claimed.position < since) since = outcome.claimed.position;
    }
    return { fresh, since: since ?? 0n };
  }

  async #claimOne(streamId: string, id: string): Promise<{ fresh: boolean; position: bigint }> {
    const reservation = this.names.reservationName(id);
    try {
      const result = await this.client.appendToStream(
        reservation,
        // A random event id: the server's own idempotency must not accept another stream's claim.
        [
          {
            id: randomUUID(),
            contentType: 'application/json',
            type: RESERVATION_TYPE,
            data: { streamId },
            metadata: undefined,
          },
        ],
        { streamState: KURRENT_NO_STREAM },
      );
      const commit = result.position?.commit;
      // Any position up to this reservation's own is a safe lower bound for the events' positions.
      return { fresh: true, position: commit !== undefined && commit < NO_POSITION ? commit : 0n };
    } catch (error) {
      if (!isWrongExpectedVersion(error)) throw error;
    }
    const [existing] = await readStreamRaw(this.client, reservation, { fromRevision: START, maxCount: 1 });
    const owner = existing && isRecord(existing.data) ? existing.data.streamId : undefined;
    if (owner !== streamId) throw new DuplicateEventId(id);
    return { fresh: false, position: commitOf(existing!) };
  }

  /** The result of an append that succeeded: the position of its last event, read back. */
  async appendedResult(
    stream: string,
    ids: readonly string[],
    revision: bigint,
    since: bigint,
  ): Promise<AppendResult> {
    const [event] = await readStreamRaw(this.client, stream, { fromRevision: revision, maxCount: 1 });
    if (event && event.id === ids.at(-1)) {
      return { nextExpectedRevision: Number(event.revision), position: positionOf(event) };
    }
    // The server answered an idempotent write (a retry it recognised) with another revision.
    const stored = await this.storedResult(stream, ids, since);
    if (stored) return stored;
    throw new Error(`KurrentDB acknowledged an append to ${stream} whose events cannot be found`);
  }

  /**
   * The original result when every id is already stored in `stream`, undefined when none is, and a
   * DuplicateEventId when only some are (a different batch re-using an id).
   */
  async storedResult(
    stream: string,
    ids: readonly string[],
    since: bigint,
  ): Promise<AppendResult | undefined> {
    const found = await this.#findInStream(stream, ids, since);
    if (found.size === 0) return undefined;
    if (found.size < ids.length) throw new DuplicateEventId(ids.find((id) => found.has(id))!);
    const last = found.get(ids.at(-1)!)!;
    return { nextExpectedRevision: Number(last.revision), position: positionOf(last) };
  }

  /** Looks for `ids` in `stream` from its end back to log position `since`. */
  async #findInStream(
    stream: string,
    ids: readonly string[],
    since: bigint,
  ): Promise<Map<string, RecordedEvent>> {
    const wanted = new Set(ids);
    const found = new Map<string, RecordedEvent>();
    let from: bigint | typeof END = END;
    for (;;) {
      const page = await readStreamRaw(this.client, stream, {
        direction: BACKWARDS,
        fromRevision: from,
        maxCount: SCAN_PAGE,
      });
      for (const event of page) {
        if (commitOf(event) < since) return found;
        if (!wanted.has(event.id)) continue;
        found.set(event.id, event);
        if (found.size === wanted.size) return found;
      }
      const last = page.at(-1);
      if (page.length < SCAN_PAGE || !last || last.revision === 0n) return found;
      from = last.revision - 1n;
    }
  }
}

async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
