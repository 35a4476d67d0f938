import { KeyedLock } from '../keyed-lock.ts';
import { ChangeNotifier } from './change-notifier.ts';
import { newEventId } from './event-id.ts';
import { firstIndexAfter } from './positions.ts';
import { subscribeThroughReads } from './subscription.ts';
import {
  type AppendOptions,
  type AppendResult,
  assertAppendable,
  assertReadableAll,
  assertStorableIdentifier,
  checkExpected,
  DuplicateEventId,
  type EventStore,
  type NewEvent,
  NO_STREAM,
  type ReadAllOptions,
  type ReadStreamOptions,
  type StoredEvent,
  type StoreTestHooks,
  type SubscribeOptions,
  type SubscriptionPage,
} from './types.ts';

/**
 * In-process store for unit tests and `STUDIO_EVENT_STORE=memory`. Like the SQL adapters, an append
 * takes its positions first and becomes visible later, so readers only see events below the
 * oldest append still in flight and never skip one that commits late. As theirs do, `readAll`
 * gives back shared events: each is copied once when appended and frozen, so a follower that
 * mutates one throws here, where the other adapters would let it change what every reader sees.
 */
export class MemoryEventStore implements EventStore {
  readonly kind = 'memory' as const;
  #log: StoredEvent[] = [];
  #streams = new Map<string, StoredEvent[]>();
  #byId = new Map<string, StoredEvent>();
  /** Ids of appends still in flight, with their stream: claimed before the append awaits anything. */
  #pendingIds = new Map<string, string>();
  #nextPosition = 1;
  #inFlight = new Set<number>();
  #locks = new KeyedLock();
  #changes = new ChangeNotifier();

  constructor(private readonly hooks: StoreTestHooks = {}) {}

  append(streamId: string, events: readonly NewEvent[], options: AppendOptions): Promise<AppendResult> {
    try {
      assertAppendable(streamId, events);
    } catch (error) {
      return Promise.reject(error);
    }
    // Appends to one stream run one after another, as a row lock serializes them in SQL.
    return this.#locks.run(streamId, () => this.#append(streamId, events, options));
  }

  async #append(
    streamId: string,
    events: readonly NewEvent[],
    options: AppendOptions,
  ): Promise<AppendResult> {
    const stream = this.#streams.get(streamId) ?? [];
    const actual = stream.length - 1;
    const existing = this.#alreadyStored(streamId, events);
    if (existing) return existing;
    checkExpected(streamId, options.expected ?? 'any', actual);
    if (events.length === 0) return { nextExpectedRevision: actual, position: stream.at(-1)?.position ?? 0 };

    const createdAt = new Date().toISOString();
    const metadata = Object.freeze({ ...options.metadata });
    const stored = events.map(
      (event, index): StoredEvent =>
        Object.freeze({
          id: event.id ?? newEventId(),
          streamId,
          revision: actual + 1 + index,
          position: this.#nextPosition++,
          type: event.type,
          data: deepFreeze(structuredClone(event.data)),
          metadata,
          createdAt,
        }),
    );
    for (const event of stored) {
      if (this.#byId.has(event.id) || this.#pendingIds.has(event.id)) throw new DuplicateEventId(event.id);
    }
    // Claimed synchronously, before the first await: a concurrent append of one of these ids to
    // another stream sees them and fails instead of storing the id twice.
    for (const event of stored) {
      this.#inFlight.add(event.position);
      this.#pendingIds.set(event.id, streamId);
    }
    try {
      await this.hooks.beforeCommit?.(streamId);
      stream.push(...stored);
      this.#streams.set(streamId, stream);
      for (const event of stored) {
        this.#byId.set(event.id, event);
        insertByPosition(this.#log, event);
      }
    } finally {
      for (const event of stored) {
        this.#inFlight.delete(event.position);
        this.#pendingIds.delete(event.id);
      }
      // Also after a failure: events appended meanwhile behind this one's positions are visible now.
      this.#changes.notify();
    }
    const last = stored.at(-1)!;
    return { nextExpectedRevision: last.revision, position: last.position };
  }

  #alreadyStored(streamId: string, events: readonly NewEvent[]): AppendResult | undefined {
    const pendingElsewhere = events.find((event) => {
      const owner = event.id === undefined ? undefined : this.#pendingIds.get(event.id);
      return owner !== undefined && owner !== streamId;
    });
    if (pendingElsewhere) throw new DuplicateEventId(pendingElsewhere.id!);
    const found = events.map((event) => (event.id ? this.#byId.get(event.id) : undefined));
    if (found.every((event) => event === undefined)) return undefined;
    if (found.some((event) => event === undefined || event.streamId !== streamId)) {
      // Name the id that is re-used (first one stored in another stream), not a new id of the batch.
      const clash =
        found.find((event) => event !== undefined && event.streamId !== streamId) ??
        found.find((event) => event !== undefined);
      throw new DuplicateEventId(clash!.id);
    }
    const last = found.at(-1)!;
    return { nextExpectedRevision: last.revision, position: last.position };
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    assertStorableIdentifier('stream id', streamId);
    if (this.hooks.beforeRead) await this.hooks.beforeRead({ kind: 'readStream', streamId });
    const stream = this.#streams.get(streamId) ?? [];
    const from = (options.after ?? NO_STREAM) + 1;
    return stream.slice(from, from + (options.limit ?? Number.MAX_SAFE_INTEGER)).map(copy);
  }

  async readAll(options: ReadAllOptions = {}): Promise<StoredEvent[]> {
    assertReadableAll(options);
    if (this.hooks.beforeRead) await this.hooks.beforeRead({ kind: 'readAll', options });
    const visibleBelow = this.#visibleBelow();
    const after = options.after ?? 0;
    const limit = options.limit ?? Number.MAX_SAFE_INTEGER;
    const types = options.types ? new Set(options.types) : undefined;
    const result: StoredEvent[] = [];
    for (let i = firstIndexAfter(this.#log, after); i < this.#log.length && result.length < limit; i++) {
      const event = this.#log[i]!;
      if (event.position >= visibleBelow) break;
      if (options.streamId !== undefined && event.streamId !== options.streamId) continue;
      if (types && !types.has(event.type)) continue;
      result.push(event);
    }
    return result;
  }

  subscribePages(options: SubscribeOptions): AsyncIterable<SubscriptionPage> {
    return subscribeThroughReads(this, this.#changes, options);
  }

  async headPosition(): Promise<number> {
    const visibleBelow = this.#visibleBelow();
    const index = firstIndexAfter(
      this.#log,
      visibleBelow === Number.POSITIVE_INFINITY ? Number.MAX_SAFE_INTEGER : visibleBelow - 1,
    );
    return this.#log[index - 1]?.position ?? 0;
  }

  #visibleBelow(): number {
    return this.#inFlight.size === 0 ? Number.POSITIVE_INFINITY : Math.min(...this.#inFlight);
  }

  async close(): Promise<void> {
    this.#changes.notify();
  }
}

function copy(event: StoredEvent): StoredEvent {
  return { ...event, data: structuredClone(event.data), metadata: { ...event.metadata } };
}

function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value)) return value;
  for (const child of Object.values(value)) deepFreeze(child);
  return Object.freeze(value);
}

function insertByPosition(log: StoredEvent[], event: StoredEvent): void {
  const index = firstIndexAfter(log, event.position);
  if (index === log.length) log.push(event);
  else log.splice(index, 0, event);
}
