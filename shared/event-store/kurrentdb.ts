/**
 * The KurrentDB (formerly EventStoreDB) adapter of the event store port, on the official gRPC client
 * `@kurrent/kurrentdb-client`. Mapping, in short (docs/decisions.md, "KurrentDB adapter"):
 *
 * - Streams are KurrentDB streams named `streamPrefix + streamId` (no prefix by default). Event ids
 *   are the UUIDs we pass (lower-cased), data and metadata are JSON, `createdAt` is the server's
 *   `created` timestamp (millisecond precision), revisions are the stream revisions as numbers.
 * - `position` is the event's commit position in the transaction log as a number. Every event
 *   appended through gRPC is its own implicit transaction record, so its commit and prepare positions
 *   are equal and unique; an event where they differ (an explicit transaction of the retired TCP
 *   client) is refused with an error rather than mis-ordered. Positions are byte offsets: exact as
 *   numbers below 2^53 (8 PiB of log), checked on every read. They are not dense: the gaps belong to
 *   other records of the log (system events, id reservations, other applications' streams).
 * - `readAll` and `subscribe` skip system streams (`$…`), system event types (`$…`), the id
 *   reservation streams below and, with a prefix, every stream outside it: server-side with a stream
 *   name (or event type) regular expression filter, checked again client-side.
 * - Event ids are unique across the whole store, as the port requires, through one reservation
 *   stream per id (`<prefix>studio-event-id-<uuid>`, created with NO_STREAM, naming its owner) written
 *   before the events themselves. A re-append of ids already reserved for the same stream looks for
 *   them in that stream (from its end back to the reservation) and answers the original result.
 *   Costs: one extra small append per event, and an id whose append failed stays bound to the stream
 *   it was first tried on.
 * - Subscriptions are the shared catch-up/live loop of subscription.ts over `readAll`/`readStream`,
 *   woken by one live, filtered `subscribeToAll` from the end of the log per store: appends by
 *   other processes wake it as the server delivers them; after a dropped subscription it reconnects
 *   and wakes every reader once, so nothing appended meanwhile waits for the next event.
 * - The node commits appends one after another in log order, and an acknowledged append is readable
 *   on the node that took it (the leader, which the client prefers): readers have no late commit to
 *   wait for, and the test-only `beforeCommit` hook has nothing to hold (it is refused).
 * - `after` positions must be 0 or positions this store returned (a read starts at a record).
 */
import { randomUUID } from 'node:crypto';
import {
  type AllStreamResolvedEvent,
  ANY,
  type AppendStreamState,
  type AppendToStreamOptions,
  BACKWARDS,
  END,
  type EventData,
  eventTypeFilter,
  type Filter,
  FORWARDS,
  type JSONType,
  NO_STREAM as KURRENT_NO_STREAM,
  type AppendResult as KurrentAppendResult,
  KurrentDBClient,
  type ReadAllOptions as KurrentReadAllOptions,
  type ReadStreamOptions as KurrentReadStreamOptions,
  type Position,
  type ReadPosition,
  type RecordedEvent,
  type ResolvedEvent,
  START,
  STREAM_EXISTS,
  type SubscribeToAllOptions,
  streamNameFilter,
} from '@kurrent/kurrentdb-client';
import { ChangeNotifier } from './change-notifier.ts';
import { catchUpThenLive } from './subscription.ts';
import {
  type AppendOptions,
  type AppendResult,
  assertAppendable,
  assertDistinctIds,
  assertReadableAll,
  assertStorableIdentifier,
  checkExpected,
  DuplicateEventId,
  type EventMetadata,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  NO_STREAM,
  type ReadAllOptions,
  type ReadStreamOptions,
  type StoredEvent,
  type StoreTestHooks,
  type SubscribeOptions,
  type SubscriptionItem,
  WrongExpectedRevision,
} from './types.ts';

/** The live subscription's handle: the client's `AllStreamSubscription` fits it. */
export interface LiveSubscription {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  unsubscribe(): Promise<void>;
}

/** What the adapter uses of `KurrentDBClient`; the real client fits it, a test may pass a fake. */
export interface KurrentClient {
  appendToStream(
    streamName: string,
    events: EventData[],
    options?: AppendToStreamOptions,
  ): Promise<KurrentAppendResult>;
  readStream(streamName: string, options?: KurrentReadStreamOptions): AsyncIterable<ResolvedEvent>;
  readAll(options?: KurrentReadAllOptions): AsyncIterable<AllStreamResolvedEvent>;
  subscribeToAll(options?: SubscribeToAllOptions): LiveSubscription;
  dispose(): Promise<void>;
}

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

/** Marks the id reservation streams (after the prefix); no Studio stream may start with it. */
export const RESERVATION_MARK = 'studio-event-id-';
const RESERVATION_TYPE = 'StudioEventIdReserved';
/** Events per `readAll` request while paging. */
const READ_PAGE = 1_000;
/** Events per backward request while looking for the ids of a retried append. */
const SCAN_PAGE = 256;
/** Reservations written at once for one append. */
const RESERVE_CONCURRENCY = 128;
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Positions the client reports for "none" (-1 read as an unsigned 64-bit number) and beyond. */
const NO_POSITION = 2n ** 63n;

export class KurrentDbEventStore implements EventStore {
  readonly kind = 'kurrentdb' as const;
  /** Notified by the live subscription (and by local appends); wakes subscribers. */
  readonly changes = new ChangeNotifier();
  readonly #client: KurrentClient;
  readonly #prefix: string;
  readonly #ownsClient: boolean;
  readonly #confirmTimeoutMs: number;
  /** Server-side filter for "our" streams: ours by prefix, no system or reservation stream. */
  readonly #ourStreams: Filter;
  #starting: Promise<void> | undefined;
  #live: LiveSubscription | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: KurrentDbStoreOptions) {
    const prefix = options.streamPrefix ?? '';
    if (prefix.startsWith('$')) throw new Error(`streamPrefix may not start with "$" (got "${prefix}")`);
    this.#client = options.client;
    this.#prefix = prefix;
    this.#ownsClient = options.ownsClient ?? true;
    this.#confirmTimeoutMs = options.confirmTimeoutMs ?? 15_000;
    this.#ourStreams = streamNameFilter({
      regex: `^(?!\\$)${escapeRegex(prefix)}(?!${escapeRegex(RESERVATION_MARK)})`,
    });
  }

  /** Opens the live subscription that wakes subscribers; resolves once the server confirmed it. */
  start(): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('the KurrentDB store is closed'));
    this.#starting ??= this.#subscribeLive().catch((error: unknown) => {
      this.#starting = undefined;
      throw error;
    });
    return this.#starting;
  }

  async append(streamId: string, events: readonly NewEvent[], options: AppendOptions): Promise<AppendResult> {
    assertAppendable(streamId, events);
    const stream = this.#writableName(streamId);
    const expected = options.expected ?? 'any';
    if (events.length === 0) return this.#checkOnly(streamId, stream, expected);

    const batch = events.map((event) => ({ ...event, id: normalizeId(event.id ?? randomUUID()) }));
    assertDistinctIds(batch); // again: ids that differ only in case are one UUID
    const ids = batch.map((event) => event.id);
    const claim = await this.#claim(streamId, ids);
    if (!claim.fresh) {
      const stored = await this.#storedResult(stream, ids, claim.since);
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
      const stored = await this.#storedResult(stream, ids, claim.since);
      if (stored) return stored;
      throw new WrongExpectedRevision(streamId, expected, actualRevision(error));
    } finally {
      // Local subscribers need not wait for the live subscription to hear of it.
      this.changes.notify();
    }
    return this.#appendedResult(stream, ids, appended.nextExpectedRevision, claim.since);
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    assertStorableIdentifier('stream id', streamId);
    const limit = options.limit ?? Number.MAX_SAFE_INTEGER;
    const after = options.after ?? NO_STREAM;
    if (limit <= 0 || !this.#isStudioStream(streamId)) return [];
    const events = await this.#readStreamRaw(this.#name(streamId), {
      direction: FORWARDS,
      fromRevision: after < 0 ? START : BigInt(after + 1),
      maxCount: limit,
    });
    return events.filter((event) => !isSystemType(event.type)).map((event) => this.#toStored(event));
  }

  async readAll(options: ReadAllOptions = {}): Promise<StoredEvent[]> {
    assertReadableAll(options);
    const limit = options.limit ?? Number.MAX_SAFE_INTEGER;
    if (limit <= 0 || options.types?.length === 0) return [];
    const types = options.types === undefined ? undefined : new Set(options.types);
    let stream: string | undefined;
    let filter = this.#ourStreams;
    if (options.streamId !== undefined) {
      if (!this.#isStudioStream(options.streamId)) return [];
      stream = this.#name(options.streamId);
      filter = streamNameFilter({ regex: `^${escapeRegex(stream)}$` });
    } else if (types !== undefined) {
      filter = eventTypeFilter({ regex: `^(?:${[...types].map(escapeRegex).join('|')})$` });
    }
    return this.#readForward(options.after ?? 0, limit, filter, (event) => {
      if (stream !== undefined && event.streamId !== stream) return false;
      return types === undefined || types.has(event.type);
    });
  }

  async *subscribe(options: SubscribeOptions): AsyncGenerator<SubscriptionItem> {
    if (options.signal.aborted) return;
    await this.start();
    const { streamId } = options;
    const read =
      streamId === undefined
        ? (after: number, limit: number) => this.readAll({ after, limit })
        : (after: number, limit: number) => this.readStream(streamId, { after, limit });
    yield* catchUpThenLive(options, read, this.changes);
  }

  async headPosition(): Promise<number> {
    let from: ReadPosition = END;
    for (;;) {
      let seen = 0;
      let last: Position | undefined;
      for await (const resolved of this.#client.readAll({
        direction: BACKWARDS,
        fromPosition: from,
        maxCount: SCAN_PAGE,
        filter: this.#ourStreams,
      })) {
        seen++;
        const event = resolved.event;
        if (!event) continue;
        last = logPosition(event);
        if (this.#isOurs(event)) return positionOf(event);
      }
      if (seen < SCAN_PAGE || last === undefined) return 0;
      from = last;
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    const live = this.#live;
    this.#live = undefined;
    await live?.unsubscribe().catch(() => undefined);
    this.changes.notify();
    if (this.#ownsClient) await this.#client.dispose().catch(() => undefined);
  }

  // --- appends -------------------------------------------------------------------------------

  /** An empty append only checks the expected revision against the stream's last event. */
  async #checkOnly(streamId: string, stream: string, expected: ExpectedRevision): Promise<AppendResult> {
    const [last] = await this.#readStreamRaw(stream, {
      direction: BACKWARDS,
      fromRevision: END,
      maxCount: 1,
    });
    const actual = last ? Number(last.revision) : NO_STREAM;
    checkExpected(streamId, expected, actual);
    return { nextExpectedRevision: actual, position: last ? positionOf(last) : 0 };
  }

  async #lastRevision(stream: string): Promise<number> {
    const [last] = await this.#readStreamRaw(stream, {
      direction: BACKWARDS,
      fromRevision: END,
      maxCount: 1,
    });
    return last ? Number(last.revision) : NO_STREAM;
  }

  /**
   * Reserves every id for `streamId`. `fresh`: this call created every reservation, so none of the
   * ids can be stored yet; `since`: a log position no event of these ids can be stored before.
   */
  async #claim(streamId: string, ids: readonly string[]): Promise<{ fresh: boolean; since: bigint }> {
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
    const reservation = this.#reservationName(id);
    try {
      const result = await this.#client.appendToStream(
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
    const [existing] = await this.#readStreamRaw(reservation, { fromRevision: START, maxCount: 1 });
    const owner = existing && isRecord(existing.data) ? existing.data.streamId : undefined;
    if (owner !== streamId) throw new DuplicateEventId(id);
    return { fresh: false, position: commitOf(existing!) };
  }

  /** The result of an append that succeeded: the position of its last event, read back. */
  async #appendedResult(
    stream: string,
    ids: readonly string[],
    revision: bigint,
    since: bigint,
  ): Promise<AppendResult> {
    const [event] = await this.#readStreamRaw(stream, { fromRevision: revision, maxCount: 1 });
    if (event && event.id === ids.at(-1)) {
      return { nextExpectedRevision: Number(event.revision), position: positionOf(event) };
    }
    // The server answered an idempotent write (a retry it recognised) with another revision.
    const stored = await this.#storedResult(stream, ids, since);
    if (stored) return stored;
    throw new Error(`KurrentDB acknowledged an append to ${stream} whose events cannot be found`);
  }

  /**
   * The original result when every id is already stored in `stream`, undefined when none is, and a
   * DuplicateEventId when only some are (a different batch re-using an id).
   */
  async #storedResult(
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
      const page = await this.#readStreamRaw(stream, {
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

  // --- reads ---------------------------------------------------------------------------------

  async #readStreamRaw(stream: string, options: KurrentReadStreamOptions): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    try {
      for await (const resolved of this.#client.readStream(stream, options)) {
        if (resolved.event) events.push(resolved.event);
      }
    } catch (error) {
      if (isStreamNotFound(error)) return [];
      throw error;
    }
    return events;
  }

  /**
   * Pages forward through `$all` after position `after` until `limit` events pass the checks. A read
   * from a position includes the event at it, so each page starts at the last one seen and skips it.
   */
  async #readForward(
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
      for await (const resolved of this.#client.readAll({ fromPosition: from, maxCount: want, filter })) {
        seen++;
        const event = resolved.event;
        if (!event) continue;
        // Other records only page the read: their positions are never handed out.
        const position = logPosition(event);
        last = position;
        if (!isAfter(position, cursor) || !this.#isOurs(event) || !accept(event)) continue;
        result.push(this.#toStored(event));
        if (result.length >= limit) return result;
      }
      if (seen < want || last === undefined) return result;
      from = last;
      cursor = last;
    }
  }

  #toStored(event: RecordedEvent): StoredEvent {
    return {
      id: event.id,
      streamId: event.streamId.slice(this.#prefix.length),
      revision: Number(event.revision),
      position: positionOf(event),
      type: event.type,
      data: decodeData(event),
      metadata: decodeMetadata(event.metadata),
      createdAt: event.created.toISOString(),
    };
  }

  // --- names ---------------------------------------------------------------------------------

  #name(streamId: string): string {
    return `${this.#prefix}${streamId}`;
  }

  #reservationName(id: string): string {
    return `${this.#prefix}${RESERVATION_MARK}${id}`;
  }

  /** Whether `streamId` can be a Studio stream: not a system stream, not a reservation stream. */
  #isStudioStream(streamId: string): boolean {
    return !this.#name(streamId).startsWith('$') && !streamId.startsWith(RESERVATION_MARK);
  }

  #writableName(streamId: string): string {
    if (streamId === '' || !this.#isStudioStream(streamId)) {
      throw new Error(`"${streamId}" cannot be a stream id on KurrentDB (system or reserved name)`);
    }
    return this.#name(streamId);
  }

  /**
   * Client-side twin of the server filter: a user event of one of our streams. The type check also
   * hides the reservations of stores with another prefix from a store without one.
   */
  #isOurs(event: RecordedEvent): boolean {
    const name = event.streamId;
    return (
      !isSystemType(event.type) &&
      event.type !== RESERVATION_TYPE &&
      !name.startsWith('$') &&
      name.startsWith(this.#prefix) &&
      !name.startsWith(RESERVATION_MARK, this.#prefix.length)
    );
  }

  // --- live subscription ---------------------------------------------------------------------

  #subscribeLive(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const subscription = this.#client.subscribeToAll({ fromPosition: END, filter: this.#ourStreams });
      this.#live = subscription;
      let confirmed = false;
      let ended = false;
      const timer = setTimeout(
        () =>
          end(new Error(`KurrentDB did not confirm the subscription within ${this.#confirmTimeoutMs} ms`)),
        this.#confirmTimeoutMs,
      );
      const confirm = () => {
        if (confirmed || ended) return;
        confirmed = true;
        clearTimeout(timer);
        resolve();
      };
      const end = (error: unknown) => {
        if (ended) return;
        ended = true;
        clearTimeout(timer);
        if (this.#live === subscription) this.#live = undefined;
        void subscription.unsubscribe().catch(() => undefined);
        if (!confirmed) reject(error);
        else this.#reconnect(0);
      };
      subscription.on('confirmation', () => {
        confirm();
        this.changes.notify();
      });
      subscription.on('caughtUp', confirm);
      subscription.on('data', () => {
        confirm();
        this.changes.notify();
      });
      subscription.on('error', (error) => end(error));
      subscription.on('end', () => end(new Error('the KurrentDB subscription ended')));
      subscription.on('close', () => end(new Error('the KurrentDB subscription closed')));
    });
  }

  #reconnect(attempt: number): void {
    if (this.#closed) return;
    const delay = Math.min(RECONNECT_MIN_MS * 2 ** attempt, RECONNECT_MAX_MS);
    this.#retryTimer = setTimeout(() => {
      if (this.#closed) return;
      this.#subscribeLive().then(
        // Events appended while no subscription listened: every reader looks once.
        () => this.changes.notify(),
        () => this.#reconnect(attempt + 1),
      );
    }, delay);
  }
}

export interface OpenKurrentDbOptions {
  /** A KurrentDB connection string, e.g. `kurrentdb://localhost:2113?tls=false`. */
  connectionString: string;
  streamPrefix?: string;
  hooks?: StoreTestHooks;
  confirmTimeoutMs?: number;
}

/** Connects, opens the live subscription and returns the store (closing the client on failure). */
export async function openKurrentDbStore(options: OpenKurrentDbOptions): Promise<KurrentDbEventStore> {
  if (options.hooks?.beforeCommit) {
    throw new Error('the kurrentdb store commits on the server and cannot honour the beforeCommit test hook');
  }
  const client = KurrentDBClient.connectionString(options.connectionString);
  const store = new KurrentDbEventStore({
    client,
    streamPrefix: options.streamPrefix,
    confirmTimeoutMs: options.confirmTimeoutMs,
  });
  try {
    await store.start();
  } catch (error) {
    await store.close();
    throw new Error(`cannot open KurrentDB at ${redactConnectionString(options.connectionString)}`, {
      cause: error,
    });
  }
  return store;
}

/** The connection string without its password, for logs and `location`. */
export function redactConnectionString(connectionString: string): string {
  return connectionString.replace(/^([a-z+]+:\/\/[^:@/]+:)[^@/]*@/i, '$1***@');
}

// --- mapping helpers -----------------------------------------------------------------------------

function toStreamState(expected: ExpectedRevision): AppendStreamState | undefined {
  switch (expected) {
    case 'any':
      return ANY;
    case 'no_stream':
      return KURRENT_NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    default:
      if (expected === NO_STREAM) return KURRENT_NO_STREAM;
      // Not a revision any stream can have: the caller gets WrongExpectedRevision, as elsewhere.
      return Number.isSafeInteger(expected) && expected >= 0 ? BigInt(expected) : undefined;
  }
}

function errorType(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'type' in error ? error.type : undefined;
}

function isWrongExpectedVersion(error: unknown): error is { actualState: bigint | string } {
  return errorType(error) === 'wrong-expected-version';
}

function isStreamNotFound(error: unknown): boolean {
  return errorType(error) === 'stream-not-found';
}

/** The stream's last revision a WrongExpectedVersionError reports (-1 when it does not exist). */
function actualRevision(error: { actualState: bigint | string }): number {
  return typeof error.actualState === 'bigint' ? Number(error.actualState) : NO_STREAM;
}

function isSystemType(type: string): boolean {
  return type.startsWith('$');
}

function normalizeId(id: string): string {
  if (!UUID.test(id))
    throw new TypeError(`event id ${JSON.stringify(id)} is not a UUID (KurrentDB needs one)`);
  return id.toLowerCase();
}

/** The event's place in the log, as the server reports it. */
function logPosition(event: RecordedEvent): Position {
  const position: Position | undefined = event.position;
  if (!position || position.commit < 0n || position.commit >= NO_POSITION) {
    throw new Error(
      `KurrentDB returned event ${event.id} of ${event.streamId} without its log position (KurrentDB 22.6 or later is required)`,
    );
  }
  return position;
}

function isAfter(position: Position, cursor: Position): boolean {
  return (
    position.commit > cursor.commit ||
    (position.commit === cursor.commit && position.prepare > cursor.prepare)
  );
}

/** The commit position of one of our events, which must equal its prepare position. */
function commitOf(event: RecordedEvent): bigint {
  const position = logPosition(event);
  if (position.commit !== position.prepare) {
    throw new Error(
      `event ${event.id} of ${event.streamId} was written in an explicit transaction (commit ${position.commit}, prepare ${position.prepare}); Studio's positions need one record per event`,
    );
  }
  return position.commit;
}

function positionOf(event: RecordedEvent): number {
  const commit = commitOf(event);
  if (commit > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RangeError(`log position ${commit} of event ${event.id} is beyond 2^53: not exact as a number`);
  }
  return Number(commit);
}

function toPosition(position: number): Position {
  if (!Number.isSafeInteger(position)) throw new RangeError(`${position} is not a log position`);
  return { commit: BigInt(position), prepare: BigInt(position) };
}

function decodeData(event: RecordedEvent): unknown {
  // JSON events arrive parsed (a string when the payload was not valid JSON).
  if (event.isJson) return event.data;
  const text = Buffer.from(event.data as Uint8Array).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return Buffer.from(event.data as Uint8Array).toString('base64');
  }
}

function decodeMetadata(metadata: unknown): EventMetadata {
  // Whatever Studio wrote, as the SQL stores keep it.
  if (isRecord(metadata) && typeof metadata.actor === 'string')
    return { ...metadata } as unknown as EventMetadata;
  // Not written by Studio: no actor to name.
  return { actor: 'system' };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
  );
}

/** Escapes a literal for a regular expression, read the same by .NET (the server) and JavaScript. */
function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
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
