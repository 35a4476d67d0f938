/**
 * The event store port. Every adapter (memory, sqlite, postgres, kurrentdb) implements it and
 * passes the one contract suite in test/contract/event-store.contract.ts.
 */

/** Who caused an event and within which request; carried by every event. */
export interface EventMetadata {
  /** `admin`, `token:<id>`, `guest`, `runtime` or `system`. */
  actor: string;
  requestId?: string;
  correlationId?: string;
  causationId?: string;
}

export interface NewEvent<Type extends string = string, Data = unknown> {
  /** A UUID. Re-appending an id already stored in the same stream is a no-op. Generated when absent. */
  id?: string;
  type: Type;
  data: Data;
}

export interface StoredEvent<Type extends string = string, Data = unknown> {
  id: string;
  streamId: string;
  /** 0-based position inside its stream. */
  revision: number;
  /** Monotonic position in the whole log, starting at 1. */
  position: number;
  type: Type;
  data: Data;
  metadata: EventMetadata;
  /** ISO 8601 UTC. */
  createdAt: string;
}

/** `revision` = the stream's last revision must be exactly this. */
export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | number;

export interface AppendOptions {
  expected?: ExpectedRevision;
  metadata: EventMetadata;
}

export interface AppendResult {
  /** Revision of the last event of the stream after this append. */
  nextExpectedRevision: number;
  /** Global position of the last appended (or already stored) event. */
  position: number;
}

export interface ReadStreamOptions {
  /** Return events with revision > after. Default: from the start. */
  after?: number;
  limit?: number;
}

export interface ReadAllOptions {
  /** Return events with position > after. Default 0. */
  after?: number;
  limit?: number;
  /** Only events of this stream. */
  streamId?: string;
  /** Only events of these types. */
  types?: readonly string[];
}

export interface SubscribeOptions {
  /** Subscribe to one stream (positions are revisions) or, when absent, to the whole log. */
  streamId?: string;
  /** Deliver events after this revision (stream) or position (log). Default: from the start. */
  after?: number;
  signal: AbortSignal;
  batchSize?: number;
  /**
   * Whole log only: deliver only the events of streams of these categories (`streamCategory`).
   * Commits to other streams do not wake the subscription at once (at most every
   * `OTHER_COMMITS_SETTLE_MS`), and `$caught_up` then comes each time it has caught up, at the
   * position through which the log was read, so that a reader's position passes what it skips.
   */
  categories?: readonly string[];
}

/** A stream's category: its id up to the first `-` (`session-ses_1` → `session`), or all of it. */
export function streamCategory(streamId: string): string {
  const dash = streamId.indexOf('-');
  return dash < 0 ? streamId : streamId.slice(0, dash);
}

/**
 * The marker a subscription yields once it has delivered every event stored when it started reading
 * (with `categories`, again each time it has caught up since).
 */
export interface CaughtUp {
  type: '$caught_up';
  /**
   * Revision (stream) or position (log) of the last event delivered, or the `after` it started from;
   * with `categories`, the position through which the log was read.
   */
  position: number;
}

export type SubscriptionItem = StoredEvent | CaughtUp;

/** Events a subscription hands on together, in order: a part of one read. */
export interface EventPage {
  type: '$page';
  events: readonly StoredEvent[];
}

export type SubscriptionPage = EventPage | CaughtUp;

export const isCaughtUp = (item: SubscriptionItem | SubscriptionPage): item is CaughtUp =>
  item.type === '$caught_up';

export type EventStoreKind = 'memory' | 'sqlite' | 'postgres' | 'kurrentdb';

/**
 * Whether the process holding a store of `kind` is the only one appending to its log: the embedded
 * store admits one process per data directory (its lock), the memory store lives in one process.
 */
export const hasSoleWriter = (kind: EventStoreKind): boolean => kind === 'memory' || kind === 'sqlite';

export interface EventStore {
  readonly kind: EventStoreKind;
  append(streamId: string, events: readonly NewEvent[], options: AppendOptions): Promise<AppendResult>;
  /** The caller's own copies of a stream's events (an aggregate may fold them as it likes). */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]>;
  /** Events of the whole log, which the store may share with its other readers: nothing may mutate them. */
  readAll(options?: ReadAllOptions): Promise<StoredEvent[]>;
  /**
   * Catch-up, then a `$caught_up` marker, then live events, handed on a page at a time; ends
   * cleanly when the signal aborts. `subscribe` (subscription.ts) hands them on one by one.
   */
  subscribePages(options: SubscribeOptions): AsyncIterable<SubscriptionPage>;
  /** Position of the last event a reader can see (0 when empty). */
  headPosition(): Promise<number>;
  close(): Promise<void>;
}

/**
 * A store that takes another log's events exactly as they were stored there (`studio log copy`):
 * ids, streams, revisions, positions and times kept, so every event digests as before and the
 * copy's seals verify.
 */
export interface ImportingStore extends EventStore {
  /**
   * Writes `events` (in position order, the first after this log's head) in one transaction. The
   * positions this store gives later appends come after them.
   */
  importEvents(events: readonly StoredEvent[]): Promise<void>;
}

/** Raised when `expected` does not match the stream's state. */
export class WrongExpectedRevision extends Error {
  override readonly name = 'WrongExpectedRevision';
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    /** The stream's last revision, or -1 when it has no events. */
    readonly actual: number,
  ) {
    super(`stream ${streamId}: expected revision ${String(expected)}, actual ${actual}`);
  }
}

/** Raised when an event id is re-used with different content or in another stream. */
export class DuplicateEventId extends Error {
  override readonly name = 'DuplicateEventId';
  constructor(readonly eventId: string) {
    super(`event id ${eventId} is already stored elsewhere`);
  }
}

/** What names an event: its stream id and its type. */
export type EventIdentifier = 'stream id' | 'event type';

/**
 * The log is gone for good in this process (the embedded database stopped, or its thread ended):
 * every call fails with this, and a new start recovers the log. The message says why.
 */
export class EventLogStopped extends Error {
  override readonly name = 'EventLogStopped';
}

/** The embedded log could not be opened or created; the message says where and why, in the database's words. */
export class EventLogWontOpen extends Error {
  override readonly name = 'EventLogWontOpen';
}

/**
 * Raised for a stream id or event type that holds a NUL character or an unpaired surrogate: text no
 * store can keep as it is (PostgreSQL's `text` refuses NUL, UTF-8 has no lone surrogates), so every
 * adapter refuses it, the memory store included.
 */
export class UnstorableIdentifier extends Error {
  override readonly name = 'UnstorableIdentifier';
  constructor(
    readonly field: EventIdentifier,
    readonly value: string,
  ) {
    super(`the ${field} ${JSON.stringify(value)} holds a NUL character or an unpaired surrogate`);
  }
}

const NUL_OR_LONE_SURROGATE = /\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Whether `text` can be a stream id or an event type in every store. */
export function isStorableIdentifier(text: string): boolean {
  return !NUL_OR_LONE_SURROGATE.test(text);
}

export function assertStorableIdentifier(field: EventIdentifier, text: string): void {
  if (!isStorableIdentifier(text)) throw new UnstorableIdentifier(field, text);
}

/** The checks every adapter makes before an append: storable names, no event id twice. */
export function assertAppendable(streamId: string, events: readonly NewEvent[]): void {
  assertStorableIdentifier('stream id', streamId);
  for (const event of events) assertStorableIdentifier('event type', event.type);
  assertDistinctIds(events);
}

/** The checks every adapter makes before `readAll`: a stream id or types no append could have stored. */
export function assertReadableAll(options: ReadAllOptions): void {
  if (options.streamId !== undefined) assertStorableIdentifier('stream id', options.streamId);
  for (const type of options.types ?? []) assertStorableIdentifier('event type', type);
}

/**
 * Test-only hook: adapters await it after an append has taken its positions and before it becomes
 * visible, so the contract suite can hold a transaction open and prove readers never skip it.
 */
export interface StoreTestHooks {
  beforeCommit?: (streamId: string) => Promise<void>;
  /**
   * Awaited before `readAll` / `readStream` (memory and SQL adapters) reads anything: a rejection
   * is that read failing, as a connection reset would make it fail.
   */
  beforeRead?: (read: StoreRead) => Promise<void>;
}

/** Which read `beforeRead` is about to run. */
export type StoreRead =
  | { kind: 'readAll'; options: ReadAllOptions }
  | { kind: 'readStream'; streamId: string };

/** `after` of the last revision of a stream (-1 means empty). */
export const NO_STREAM = -1;

/** One append may not carry the same event id twice. */
export function assertDistinctIds(events: readonly NewEvent[]): void {
  const seen = new Set<string>();
  for (const event of events) {
    if (event.id === undefined) continue;
    if (seen.has(event.id)) throw new DuplicateEventId(event.id);
    seen.add(event.id);
  }
}

export function checkExpected(streamId: string, expected: ExpectedRevision, actual: number): void {
  const ok =
    expected === 'any' ||
    (expected === 'no_stream' && actual === NO_STREAM) ||
    (expected === 'stream_exists' && actual !== NO_STREAM) ||
    expected === actual;
  if (!ok) throw new WrongExpectedRevision(streamId, expected, actual);
}
