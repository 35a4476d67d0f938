/**
 * An in-process stand-in for one KurrentDB node behind the client API the adapter uses, so the
 * contract suite can exercise the adapter's own logic (id reservations, retries, paging, filters,
 * position mapping, the live wake-up) where no server exists. It models what the server does as
 * read in its source and the client's code: one log of records with sparse byte positions (commit ==
 * prepare for every event), reads of `$all` forwards from a position *including* the event at it and
 * backwards from a position *excluding* it, server-side regex/prefix filters, WrongExpectedVersion
 * and StreamNotFound errors of the client's classes, idempotent re-appends at an exact expected
 * revision, system events, and a live subscription that confirms and then pushes new events. It is
 * not a server: passing against it proves the adapter's logic, never KurrentDB's behaviour.
 */
import { EventEmitter } from 'node:events';
import { setImmediate as tick } from 'node:timers/promises';
import {
  type AllStreamResolvedEvent,
  ANY,
  type AppendResult,
  type AppendToStreamOptions,
  BACKWARDS,
  END,
  type EventData,
  type Filter,
  NO_STREAM,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type ResolvedEvent,
  START,
  STREAM_EXISTS,
  StreamNotFoundError,
  type SubscribeToAllOptions,
  UnavailableError,
  WrongExpectedVersionError,
} from '@kurrent/kurrentdb-client';
import type { KurrentClient, LiveSubscription } from '../../shared/event-store/kurrentdb/client.ts';

interface FakeRecord {
  streamName: string;
  id: string;
  revision: bigint;
  position: bigint;
  type: string;
  data: string;
  metadata: string | undefined;
  created: Date;
  /** Written by an explicit transaction (commit position after the prepare). */
  explicit?: boolean;
}

export class FakeKurrentServer {
  readonly log: FakeRecord[] = [];
  readonly streams = new Map<string, FakeRecord[]>();
  readonly subscriptions = new Set<FakeSubscription>();
  #positions = new Set<bigint>();
  #next = 128n;
  #appends = 0;

  /** Every `systemEventEvery`-th append is preceded by a system event, as a node's statistics are. */
  readonly systemEventEvery: number;
  /**
   * Whether re-appended ids are recognised as the server does (the same ids right after an exact
   * expected revision, or found by ANY): off, every retry reaches the adapter's own checks.
   */
  readonly idempotentRetries: boolean;

  /** State of the pseudo-random delays that shuffle concurrent calls (seeded: runs repeat). */
  #seed: number;

  constructor(options: { systemEventEvery?: number; idempotentRetries?: boolean; seed?: number } = {}) {
    this.systemEventEvery = options.systemEventEvery ?? 4;
    this.idempotentRetries = options.idempotentRetries ?? true;
    this.#seed = options.seed ?? 1;
  }

  /** A network round trip: 1 to 4 turns of the event loop, so concurrent calls overtake each other. */
  async roundTrip(): Promise<void> {
    // xorshift32
    this.#seed ^= this.#seed << 13;
    this.#seed ^= this.#seed >>> 17;
    this.#seed ^= this.#seed << 5;
    const turns = 1 + ((this.#seed >>> 0) % 4);
    for (let i = 0; i < turns; i++) await tick();
  }

  client(): FakeKurrentClient {
    return new FakeKurrentClient(this);
  }

  /** Drops every live subscription, as a restarting node or a broken connection does. */
  dropSubscriptions(): void {
    for (const subscription of [...this.subscriptions]) subscription.fail(new UnavailableError());
  }

  /** Writes records straight into the log (system events, other applications, legacy transactions). */
  write(
    streamName: string,
    events: ReadonlyArray<{ id: string; type: string; data: unknown; metadata?: unknown }>,
    options: { explicit?: boolean } = {},
  ): FakeRecord[] {
    const stream = this.streams.get(streamName) ?? [];
    const written = events.map((event, index): FakeRecord => {
      const data = JSON.stringify(event.data ?? null);
      const record: FakeRecord = {
        streamName,
        id: event.id.toLowerCase(),
        revision: BigInt(stream.length + index),
        position: this.#next,
        type: event.type,
        data,
        metadata: event.metadata === undefined ? undefined : JSON.stringify(event.metadata),
        created: new Date(),
        explicit: options.explicit,
      };
      this.#positions.add(record.position);
      // Sparse, like byte offsets: other records (and headers) sit between events.
      this.#next += 64n + BigInt(data.length + streamName.length);
      return record;
    });
    stream.push(...written);
    this.streams.set(streamName, stream);
    this.log.push(...written);
    for (const subscription of this.subscriptions) subscription.deliver(written);
    return written;
  }

  append(streamName: string, events: EventData[], options: AppendToStreamOptions = {}): AppendResult {
    const stream = this.streams.get(streamName) ?? [];
    const current = stream.length - 1;
    const state = options.streamState ?? ANY;
    const ids = events.map((event) => event.id.toLowerCase());

    // The server's idempotency: the same ids right after the expected revision are a retry.
    const expectedLast =
      state === NO_STREAM ? -1 : typeof state === 'bigint' ? Number(state) : state === ANY ? undefined : null;
    if (this.idempotentRetries && expectedLast !== null && ids.length > 0) {
      const from =
        expectedLast === undefined ? stream.findIndex((record) => record.id === ids[0]) : expectedLast + 1;
      const match = stream.slice(from, from + ids.length);
      if (
        from >= 0 &&
        from <= current &&
        match.length === ids.length &&
        match.every((r, i) => r.id === ids[i])
      ) {
        return { success: true, nextExpectedRevision: BigInt(from + ids.length - 1), position: undefined };
      }
    }

    const ok =
      state === ANY ||
      (state === NO_STREAM && current === -1) ||
      (state === STREAM_EXISTS && current !== -1) ||
      (typeof state === 'bigint' && state === BigInt(current));
    if (!ok) {
      throw new WrongExpectedVersionError(undefined, {
        streamName,
        expected: state,
        current: current === -1 ? NO_STREAM : BigInt(current),
      });
    }
    if (++this.#appends % this.systemEventEvery === 0) {
      this.write('$stats-127.0.0.1:2113', [{ id: crypto.randomUUID(), type: '$statsCollected', data: {} }]);
    }
    const written = this.write(
      streamName,
      events.map((event) => ({
        id: event.id,
        type: event.type,
        data: event.data,
        metadata: event.metadata ?? undefined,
      })),
    );
    return {
      success: true,
      nextExpectedRevision: written.at(-1)?.revision ?? BigInt(current),
      // The first event's position: the adapter must not take it for the last one's.
      position: written[0] ? { commit: written[0].position, prepare: written[0].position } : undefined,
    };
  }

  isRecordStart(position: bigint): boolean {
    return this.#positions.has(position);
  }
}

export class FakeKurrentClient implements KurrentClient {
  #disposed = false;

  constructor(readonly server: FakeKurrentServer) {}

  async appendToStream(
    streamName: string,
    events: EventData[],
    options?: AppendToStreamOptions,
  ): Promise<AppendResult> {
    this.#check();
    await this.server.roundTrip();
    const result = this.server.append(streamName, events, options);
    await this.server.roundTrip();
    return result;
  }

  async *readStream(streamName: string, options: ReadStreamOptions = {}): AsyncGenerator<ResolvedEvent> {
    this.#check();
    await this.server.roundTrip();
    const { fromRevision = START, maxCount = Number.MAX_SAFE_INTEGER, direction } = options;
    const stream = this.server.streams.get(streamName);
    if (!stream) throw new StreamNotFoundError(undefined, streamName);
    const count = Number(maxCount);
    let selected: FakeRecord[];
    if (direction === BACKWARDS) {
      const from = fromRevision === END || fromRevision === START ? stream.length - 1 : Number(fromRevision);
      selected = stream
        .slice(0, Math.min(from, stream.length - 1) + 1)
        .reverse()
        .slice(0, count);
    } else {
      const from = fromRevision === START ? 0 : fromRevision === END ? stream.length : Number(fromRevision);
      selected = stream.slice(from, from + count);
    }
    for (const record of selected) yield { event: toRecorded(record), commitPosition: record.position };
  }

  async *readAll(options: ReadAllOptions = {}): AsyncGenerator<AllStreamResolvedEvent> {
    this.#check();
    await this.server.roundTrip();
    const { fromPosition = START, maxCount = Number.MAX_SAFE_INTEGER, direction, filter } = options;
    const count = Number(maxCount);
    let candidates: FakeRecord[];
    if (direction === BACKWARDS) {
      const before = fromPosition === END || fromPosition === START ? undefined : fromPosition.prepare;
      candidates = this.server.log.filter((r) => before === undefined || r.position < before).reverse();
    } else {
      if (typeof fromPosition === 'object' && !this.server.isRecordStart(fromPosition.prepare)) {
        // A real node would read garbage from the middle of a record.
        throw new Error(`fake KurrentDB: ${fromPosition.prepare} is not the position of a record`);
      }
      const from = fromPosition === START ? -1n : fromPosition === END ? undefined : fromPosition.prepare;
      candidates = from === undefined ? [] : this.server.log.filter((r) => r.position >= from);
    }
    let yielded = 0;
    for (const record of candidates) {
      if (yielded >= count) return;
      if (!matches(filter, record)) continue;
      yielded++;
      yield { event: toRecorded(record) as AllStreamResolvedEvent['event'], commitPosition: record.position };
    }
  }

  subscribeToAll(options: SubscribeToAllOptions = {}): LiveSubscription {
    this.#check();
    if (options.fromPosition !== END) throw new Error('the fake only subscribes from the end');
    return new FakeSubscription(this.server, options.filter);
  }

  async dispose(): Promise<void> {
    this.#disposed = true;
  }

  #check(): void {
    if (this.#disposed) throw new Error('fake KurrentDB client: used after dispose()');
  }
}

class FakeSubscription extends EventEmitter implements LiveSubscription {
  #open = true;

  constructor(
    readonly server: FakeKurrentServer,
    readonly filter: Filter | undefined,
  ) {
    super();
    server.subscriptions.add(this);
    setImmediate(() => {
      if (!this.#open) return;
      this.emit('confirmation');
      this.emit('caughtUp', {});
    });
  }

  deliver(records: readonly FakeRecord[]): void {
    const wanted = records.filter((record) => matches(this.filter, record));
    if (wanted.length === 0) return;
    setImmediate(() => {
      for (const record of wanted) if (this.#open) this.emit('data', { event: toRecorded(record) });
    });
  }

  fail(error: Error): void {
    if (!this.#open) return;
    this.#open = false;
    this.server.subscriptions.delete(this);
    setImmediate(() => {
      this.emit('error', error);
      this.emit('close');
    });
  }

  async unsubscribe(): Promise<void> {
    if (!this.#open) return;
    this.#open = false;
    this.server.subscriptions.delete(this);
    setImmediate(() => {
      this.emit('end');
      this.emit('close');
    });
  }
}

function matches(filter: Filter | undefined, record: FakeRecord): boolean {
  if (!filter) return true;
  const subject = filter.filterOn === 'streamName' ? record.streamName : record.type;
  if ('regex' in filter) return new RegExp(filter.regex).test(subject);
  return filter.prefixes.some((prefix) => subject.startsWith(prefix));
}

/** What the client hands out: data and metadata parsed afresh on every read. */
function toRecorded(record: FakeRecord): RecordedEvent {
  const prepare = record.position;
  // An explicit transaction's events carry the position of its commit record, after them.
  const commit = record.explicit ? record.position + 1_000_000n : record.position;
  return {
    streamId: record.streamName,
    id: record.id,
    isJson: true,
    revision: record.revision,
    type: record.type,
    created: record.created,
    data: JSON.parse(record.data),
    metadata: record.metadata === undefined ? undefined : JSON.parse(record.metadata),
    position: { commit, prepare },
  } as RecordedEvent;
}
