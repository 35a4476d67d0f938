/**
 * The KurrentDB (formerly EventStoreDB) adapter of the event store port, on the official gRPC client
 * `@kurrent/kurrentdb-client`. Mapping, in short (docs/decisions.md, "KurrentDB adapter"):
 *
 * - Streams are KurrentDB streams named `streamPrefix + streamId` (no prefix by default; names.ts).
 *   Event ids are the UUIDs we pass (lower-cased), data and metadata are JSON, `createdAt` is the
 *   server's `created` timestamp (millisecond precision), revisions are the stream revisions as
 *   numbers (mapping.ts).
 * - `position` is the event's commit position in the transaction log as a number (positions.ts).
 *   They are not dense: the gaps belong to other records of the log (system events, id
 *   reservations, other applications' streams).
 * - `readAll` and `subscribePages` skip system streams (`$…`), system event types (`$…`), the id
 *   reservation streams and, with a prefix, every stream outside it: server-side with a stream
 *   name (or event type) regular expression filter, checked again client-side.
 * - Event ids are unique across the whole store through one reservation stream per id
 *   (id-reservations.ts).
 * - Subscriptions are the shared catch-up/live loop of subscription.ts over `readAll`/`readStream`,
 *   woken by one live subscription per store that reconnects when it drops (live.ts).
 * - The node commits appends one after another in log order, and an acknowledged append is readable
 *   on the node that took it (the leader, which the client prefers): readers have no late commit to
 *   wait for, and the test-only `beforeCommit` hook has nothing to hold (it is refused).
 * - `after` positions must be 0 or positions this store returned (a read starts at a record).
 */

import {
  BACKWARDS,
  END,
  type EventData,
  eventTypeFilter,
  FORWARDS,
  type JSONType,
  type AppendResult as KurrentAppendResult,
  START,
  streamNameFilter,
} from '@kurrent/kurrentdb-client';
import { ChangeNotifier } from '../change-notifier.ts';
import { newEventId } from '../event-id.ts';
import { subscribeThroughReads } from '../subscription.ts';
import {
  type AppendOptions,
  type AppendResult,
  assertAppendable,
  assertDistinctIds,
  assertReadableAll,
  assertStorableIdentifier,
  checkExpected,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  NO_STREAM,
  type ReadAllOptions,
  type ReadStreamOptions,
  type StoredEvent,
  type SubscribeOptions,
  type SubscriptionPage,
  WrongExpectedRevision,
} from '../types.ts';
import { actualRevision, isWrongExpectedVersion, type KurrentClient, readStreamRaw } from './client.ts';
import { IdReservations } from './id-reservations.ts';
import { LiveWakeup } from './live.ts';
import { normalizeId, toStored, toStreamState } from './mapping.ts';
import { escapeRegex, isSystemType, StreamNames } from './names.ts';
import { positionOf } from './positions.ts';
import { headPosition, readForward } from './reads.ts';

export interface KurrentDbStoreOptions {
  client: KurrentClient;
  /**
   * Prepended to every stream name, so several Studios (or a test run) can share one KurrentDB:
   * each sees only its own streams. Default none: streams keep their own names, and `readAll` sees
   * every non-system stream of the database.
   */
  streamPrefix?: string;
  /** Dispose the client on `close()` (default true). */
  ownsClient?: boolean;
  /** How long `start()` waits for the server to confirm the live subscription (default 15 s). */
  confirmTimeoutMs?: number;
}

export class KurrentDbEventStore implements EventStore {
  readonly kind = 'kurrentdb' as const;
  /** Notified by the live subscription (and by local appends); wakes subscribers. */
  readonly changes = new ChangeNotifier();
  readonly #client: KurrentClient;
  readonly #names: StreamNames;
  readonly #reservations: IdReservations;
  readonly #live: LiveWakeup;
  readonly #ownsClient: boolean;
  #closed = false;

  constructor(options: KurrentDbStoreOptions) {
    this.#client = options.client;
    this.#names = new StreamNames(options.streamPrefix ?? '');
    this.#reservations = new IdReservations(this.#client, this.#names);
    this.#ownsClient = options.ownsClient ?? true;
    this.#live = new LiveWakeup(
      this.#client,
      this.#names.ourStreams,
      this.changes,
      options.confirmTimeoutMs ?? 15_000,
    );
  }

  /** Opens the live subscription that wakes subscribers; resolves once the server confirmed it. */
  start(): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('the KurrentDB store is closed'));
    return this.#live.start();
  }

  async append(streamId: string, events: readonly NewEvent[], options: AppendOptions): Promise<AppendResult> {
    assertAppendable(streamId, events);
    const stream = this.#names.writableName(streamId);
    const expected = options.expected ?? 'any';
    if (events.length === 0) return this.#checkOnly(streamId, stream, expected);

    const batch = events.map((event) => ({ ...event, id: normalizeId(event.id ?? newEventId()) }));
    assertDistinctIds(batch); // again: ids that differ only in case are one UUID
    const ids = batch.map((event) => event.id);
    const claim = await this.#reservations.claim(streamId, ids);
    if (!claim.fresh) {
      const stored = await this.#reservations.storedResult(stream, ids, claim.since);
      if (stored) return stored;
    }

    const state = toStreamState(expected);
    if (state === undefined) {
      throw new WrongExpectedRevision(streamId, expected, await this.#lastRevision(stream));
    }
    const metadata = { ...options.metadata };
    let appended: KurrentAppendResult;
    try {
      appended = await this.#client.appendToStream(
        stream,
        batch.map(
          (event): EventData => ({
            id: event.id,
            contentType: 'application/json',
            type: event.type,
            // Any JSON value; the client serializes it with JSON.stringify.
            data: (event.data ?? null) as JSONType,
            metadata,
          }),
        ),
        { streamState: state },
      );
    } catch (error) {
      if (!isWrongExpectedVersion(error)) throw error;
      // A concurrent retry of this very append may have stored it first.
      const stored = await this.#reservations.storedResult(stream, ids, claim.since);
      if (stored) return stored;
      throw new WrongExpectedRevision(streamId, expected, actualRevision(error));
    } finally {
      // Local subscribers need not wait for the live subscription to hear of it.
      this.changes.notify();
    }
    return this.#reservations.appendedResult(stream, ids, appended.nextExpectedRevision, claim.since);
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    assertStorableIdentifier('stream id', streamId);
    const limit = options.limit ?? Number.MAX_SAFE_INTEGER;
    const after = options.after ?? NO_STREAM;
    if (limit <= 0 || !this.#names.isStudioStream(streamId)) return [];
    const events = await readStreamRaw(this.#client, this.#names.name(streamId), {
      direction: FORWARDS,
      fromRevision: after < 0 ? START : BigInt(after + 1),
      maxCount: limit,
    });
    return events
      .filter((event) => !isSystemType(event.type))
      .map((event) => toStored(event, this.#names.prefix));
  }

  async readAll(options: ReadAllOptions = {}): Promise<StoredEvent[]> {
    assertReadableAll(options);
    const limit = options.limit ?? Number.MAX_SAFE_INTEGER;
    if (limit <= 0 || options.types?.length === 0) return [];
    const types = options.types === undefined ? undefined : new Set(options.types);
    let stream: string | undefined;
    let filter = this.#names.ourStreams;
    if (options.streamId !== undefined) {
      if (!this.#names.isStudioStream(options.streamId)) return [];
      stream = this.#names.name(options.streamId);
      filter = streamNameFilter({ regex: `^${escapeRegex(stream)}$` });
    } else if (types !== undefined) {
      filter = eventTypeFilter({ regex: `^(?:${[...types].map(escapeRegex).join('|')})$` });
    }
    return readForward(this.#client, this.#names, options.after ?? 0, limit, filter, (event) => {
      if (stream !== undefined && event.streamId !== stream) return false;
      return types === undefined || types.has(event.type);
    });
  }

  async *subscribePages(options: SubscribeOptions): AsyncGenerator<SubscriptionPage> {
    if (options.signal.aborted) return;
    await this.start();
    yield* subscribeThroughReads(this, this.changes, options);
  }

  headPosition(): Promise<number> {
    return headPosition(this.#client, this.#names);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#live.close();
    this.changes.notify();
    if (this.#ownsClient) await this.#client.dispose().catch(() => undefined);
  }

  /** An empty append only checks the expected revision against the stream's last event. */
  async #checkOnly(streamId: string, stream: string, expected: ExpectedRevision): Promise<AppendResult> {
    const [last] = await this.#readLast(stream);
    const actual = last ? Number(last.revision) : NO_STREAM;
    checkExpected(streamId, expected, actual);
    return { nextExpectedRevision: actual, position: last ? positionOf(last) : 0 };
  }

  async #lastRevision(stream: string): Promise<number> {
    const [last] = await this.#readLast(stream);
    return last ? Number(last.revision) : NO_STREAM;
  }

  #readLast(stream: string) {
    return readStreamRaw(this.#client, stream, { direction: BACKWARDS, fromRevision: END, maxCount: 1 });
  }
}
