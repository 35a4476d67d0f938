import type { Database, Statement } from 'better-sqlite3';
import { AppendBatcher } from '../append-batcher.ts';
import { ChangeNotifier } from '../change-notifier.ts';
import { newEventId } from '../event-id.ts';
import { subscribeThroughReads } from '../subscription.ts';
import {
  type AppendOptions,
  type AppendResult,
  assertAppendable,
  assertReadableAll,
  assertStorableIdentifier,
  checkExpected,
  DuplicateEventId,
  type EventMetadata,
  type ImportingStore,
  type NewEvent,
  NO_STREAM,
  type ReadAllOptions,
  type ReadStreamOptions,
  type StoredEvent,
  type StoreTestHooks,
  type SubscribeOptions,
  type SubscriptionPage,
  streamCategory,
} from '../types.ts';
import { WrittenTail } from '../written-tail.ts';
import { type SqliteWriter, sqliteCode } from './writer.ts';

/** One append as the writer takes it: data and metadata already JSON text. */
interface PendingAppend {
  streamId: string;
  options: AppendOptions;
  ids: string[];
  /** Whether each id came from the caller (only those can be stored already). */
  given: boolean[];
  types: string[];
  data: string[];
  metadata: string;
}

type Outcome = { result: AppendResult; stored?: StoredEvent[]; sizes?: number[] } | { error: unknown };

interface EventRow {
  position: number;
  stream_id: string;
  revision: number;
  event_id: string;
  type: string;
  data: string;
  metadata: string;
  created_at: string;
}

const COLUMNS = 'position, stream_id, revision, event_id, type, data, metadata, created_at';
const MAX_APPENDS_PER_BATCH = 500;
const MAX_EVENTS_PER_BATCH = 65_536;

/**
 * The embedded log on SQLite. One writer (this process: the data directory is locked) commits one
 * transaction at a time, each a group of the appends submitted in one turn of the event loop, and
 * an append resolves once its transaction is on disk (`synchronous`, see open.ts). Reads use a
 * second connection and show events up to the head, which moves only once a commit is on disk:
 * nobody reads what a power loss could still take back. Whole-log reads after the head at open are
 * answered from the events this store wrote (a `WrittenTail`) rather than read back.
 */
export class SqliteEventStore implements ImportingStore {
  readonly kind = 'sqlite' as const;
  readonly changes = new ChangeNotifier();
  readonly #batcher: AppendBatcher<PendingAppend, Outcome>;
  readonly #written: WrittenTail;
  readonly #statements: ReturnType<typeof prepare>;
  readonly #readAllStatements = new Map<string, Statement>();
  #head: number;

  constructor(
    private readonly writer: SqliteWriter,
    private readonly reader: Database,
    private readonly hooks: StoreTestHooks = {},
    /** Closes the connections, once the writes queued are done. */
    private readonly onClose: () => Promise<void> = async () => {},
  ) {
    this.#statements = prepare(writer.db, reader);
    this.#head = Number(this.#statements.head.pluck().get() ?? 0);
    this.#written = new WrittenTail(this.#head);
    this.#batcher = new AppendBatcher((batch) => this.#commit(batch), {
      maxInFlight: 1,
      maxItems: MAX_APPENDS_PER_BATCH,
      maxWeight: MAX_EVENTS_PER_BATCH,
      weight: (append) => append.ids.length,
    });
  }

  async append(streamId: string, events: readonly NewEvent[], options: AppendOptions): Promise<AppendResult> {
    assertAppendable(streamId, events);
    this.writer.assertRunning();
    if (events.length > MAX_EVENTS_PER_BATCH) {
      throw new RangeError(`at most ${MAX_EVENTS_PER_BATCH} events per append, got ${events.length}`);
    }
    const outcome = await this.#batcher.submit({
      streamId,
      options,
      ids: events.map((e) => e.id ?? newEventId()),
      given: events.map((e) => e.id !== undefined),
      types: events.map((e) => e.type),
      data: events.map((e) => JSON.stringify(e.data ?? null)),
      metadata: JSON.stringify(options.metadata),
    });
    if ('error' in outcome) throw outcome.error;
    return outcome.result;
  }

  /** One batch in one transaction; each append its own outcome. */
  async #commit(batch: PendingAppend[]): Promise<Outcome[]> {
    const hook = this.hooks.beforeCommit;
    // Stays undefined if the batch failed: then everyone is woken.
    let committed: Set<string> | undefined;
    try {
      const outcomes = await this.writer.run((db) => {
        const createdAt = new Date().toISOString();
        if (!hook) return db.transaction(() => this.#write(batch, createdAt)).immediate();
        return this.writer.transaction(db, async () => {
          const outcomes = this.#write(batch, createdAt);
          for (const [i, outcome] of outcomes.entries())
            if ('stored' in outcome) await hook(batch[i]!.streamId);
          return outcomes;
        });
      });
      // Committed: before anyone is woken, so a woken reader finds them.
      const categories = new Set<string>();
      for (const outcome of outcomes)
        if ('stored' in outcome && outcome.stored) this.#remember(outcome.stored, outcome.sizes!, categories);
      committed = categories;
      return outcomes;
    } finally {
      // Only the categories written wake their followers; a batch that failed wakes everyone.
      this.changes.notify(committed);
    }
  }

  /** Writes the batch's appends inside the open transaction; positions continue from the head. */
  #write(batch: PendingAppend[], createdAt: string): Outcome[] {
    let position = this.#head;
    return batch.map((append): Outcome => {
      try {
        const existing = this.#alreadyStored(append);
        if (existing) return { result: existing };
        const actual =
          (this.#statements.lastRevision.pluck().get(append.streamId) as number | null) ?? NO_STREAM;
        checkExpected(append.streamId, append.options.expected ?? 'any', actual);
        if (append.ids.length === 0) {
          const last = this.#statements.lastPosition.pluck().get(append.streamId) as number | undefined;
          return { result: { nextExpectedRevision: actual, position: last ?? 0 } };
        }
        const metadata = JSON.parse(append.metadata) as EventMetadata;
        const stored: StoredEvent[] = [];
        const sizes: number[] = [];
        for (const [i, id] of append.ids.entries()) {
          position++;
          const event: StoredEvent = {
            id,
            streamId: append.streamId,
            revision: actual + 1 + i,
            position,
            type: append.types[i]!,
            data: JSON.parse(append.data[i]!),
            metadata,
            createdAt,
          };
          this.#statements.insert.run(
            position,
            append.streamId,
            event.revision,
            id,
            event.type,
            append.data[i]!,
            append.metadata,
            createdAt,
          );
          stored.push(event);
          sizes.push(append.data[i]!.length + append.metadata.length);
        }
        return { result: { nextExpectedRevision: actual + append.ids.length, position }, stored, sizes };
      } catch (error) {
        if (sqliteCode(error) !== undefined) throw error; // the database's failure fails the whole batch
        return { error };
      }
    });
  }

  /** The original result when every event of the append is stored already in its stream. */
  #alreadyStored(append: PendingAppend): AppendResult | undefined {
    if (!append.given.some(Boolean)) return undefined;
    const found = append.ids.map((id, i) =>
      append.given[i]
        ? (this.#statements.byId.get(id) as
            | { stream_id: string; revision: number; position: number }
            | undefined)
        : undefined,
    );
    if (found.every((row) => row === undefined)) return undefined;
    if (found.some((row) => row === undefined || row.stream_id !== append.streamId)) {
      // Name the id that is re-used, one stored in another stream first.
      const index = found.findIndex((row) => row !== undefined && row.stream_id !== append.streamId);
      throw new DuplicateEventId(append.ids[index >= 0 ? index : found.findIndex(Boolean)]!);
    }
    const last = found.at(-1)!;
    return { nextExpectedRevision: last.revision, position: last.position };
  }

  async importEvents(events: readonly StoredEvent[]): Promise<void> {
    if (events.length === 0) return;
    const texts = events.map((e) => ({
      data: JSON.stringify(e.data ?? null),
      metadata: JSON.stringify(e.metadata),
    }));
    await this.writer.run((db) =>
      db
        .transaction(() => {
          let head = this.#head;
          for (const [i, event] of events.entries()) {
            if (event.position <= head) {
              throw new RangeError(`an imported event's position ${event.position} is not after ${head}`);
            }
            const { data, metadata } = texts[i]!;
            const { position, streamId, revision, id, type, createdAt } = event;
            this.#statements.insert.run(position, streamId, revision, id, type, data, metadata, createdAt);
            head = position;
          }
        })
        .immediate(),
    );
    const copies = events.map((event, i) => ({
      ...event,
      data: JSON.parse(texts[i]!.data),
      metadata: JSON.parse(texts[i]!.metadata) as EventMetadata,
    }));
    const sizes = texts.map((t) => t.data.length + t.metadata.length);
    this.changes.notify(this.#remember(copies, sizes, new Set()));
  }

  /**
   * Events just committed, in position order: kept for whole-log reads and the head moved past
   * them; answers `categories` with theirs added, for the wake-up.
   */
  #remember(events: readonly StoredEvent[], sizes: readonly number[], categories: Set<string>): Set<string> {
    for (const [i, event] of events.entries()) {
      this.#written.add(event, sizes[i]!);
      categories.add(streamCategory(event.streamId));
    }
    this.#head = events.at(-1)!.position;
    return categories;
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    assertStorableIdentifier('stream id', streamId);
    await this.hooks.beforeRead?.({ kind: 'readStream', streamId });
    this.writer.assertRunning();
    const rows = this.#statements.readStream.all(
      streamId,
      options.after ?? NO_STREAM,
      this.#head,
      options.limit ?? -1,
    );
    return (rows as EventRow[]).map(toStoredEvent);
  }

  async readAll(options: ReadAllOptions = {}): Promise<StoredEvent[]> {
    assertReadableAll(options);
    await this.hooks.beforeRead?.({ kind: 'readAll', options });
    this.writer.assertRunning();
    const after = options.after ?? 0;
    if (options.streamId === undefined && options.types === undefined) {
      const written = this.#written.read(after, options.limit);
      if (written) return written;
    }
    const params: unknown[] = [after, this.#head];
    let where = 'position > ? AND position <= ?';
    if (options.streamId !== undefined) {
      where += ' AND stream_id = ?';
      params.push(options.streamId);
    }
    if (options.types !== undefined) {
      where += ' AND type IN (SELECT value FROM json_each(?))';
      params.push(JSON.stringify(options.types));
    }
    params.push(options.limit ?? -1);
    const rows = this.#readAllStatement(where).all(...params);
    return (rows as EventRow[]).map(toStoredEvent);
  }

  #readAllStatement(where: string): Statement {
    let statement = this.#readAllStatements.get(where);
    if (!statement) {
      statement = this.reader.prepare(
        `SELECT ${COLUMNS} FROM events WHERE ${where} ORDER BY position LIMIT ?`,
      );
      this.#readAllStatements.set(where, statement);
    }
    return statement;
  }

  subscribePages(options: SubscribeOptions): AsyncIterable<SubscriptionPage> {
    return subscribeThroughReads(this, this.changes, options, {
      readCategories: (after, limit, categories) => this.#readCategories(after, limit, categories),
    });
  }

  /**
   * The events of `categories` after `after`, from what this store wrote or else from the file,
   * through the head as it is now: one thread commits, so nothing lands below it later.
   */
  async #readCategories(after: number, limit: number, categories: ReadonlySet<string>) {
    await this.hooks.beforeRead?.({ kind: 'readAll', options: { after, limit } });
    this.writer.assertRunning();
    const through = this.#head;
    const events: StoredEvent[] = [];
    const written = this.#written.read(after);
    if (written) {
      for (const event of written) {
        if (!categories.has(streamCategory(event.streamId))) continue;
        events.push(event);
        if (events.length === limit) return { events, through: event.position, more: true };
      }
      return { events, through, more: false };
    }
    const bounds = [...categories].flatMap((c) => [c, `${c}-`, `${c}.`]);
    const rows = this.#categoryStatement(categories.size).all(after, through, ...bounds, limit) as EventRow[];
    events.push(...rows.map(toStoredEvent));
    return events.length === limit
      ? { events, through: events.at(-1)!.position, more: true }
      : { events, through, more: false };
  }

  /** Reads by category: a stream named as its category, or named `<category>-…` (`.` follows `-`). */
  #categoryStatement(count: number): Statement {
    const where = Array.from(
      { length: count },
      () => '(stream_id = ? OR (stream_id >= ? AND stream_id < ?))',
    );
    return this.#readAllStatement(`position > ? AND position <= ? AND (${where.join(' OR ')})`);
  }

  async headPosition(): Promise<number> {
    this.writer.assertRunning();
    return this.#head;
  }

  async close(): Promise<void> {
    this.changes.notify();
    await this.onClose();
  }
}

function prepare(writer: Database, reader: Database) {
  return {
    head: writer.prepare('SELECT max(position) FROM events'),
    lastRevision: writer.prepare('SELECT max(revision) FROM events WHERE stream_id = ?'),
    lastPosition: writer.prepare(
      'SELECT position FROM events WHERE stream_id = ? ORDER BY revision DESC LIMIT 1',
    ),
    byId: writer.prepare('SELECT stream_id, revision, position FROM events WHERE event_id = ?'),
    insert: writer.prepare(`INSERT INTO events (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
    readStream: reader.prepare(
      `SELECT ${COLUMNS} FROM events WHERE stream_id = ? AND revision > ? AND position <= ? ORDER BY revision LIMIT ?`,
    ),
  };
}

function toStoredEvent(row: EventRow): StoredEvent {
  return {
    id: row.event_id,
    streamId: row.stream_id,
    revision: row.revision,
    position: row.position,
    type: row.type,
    data: JSON.parse(row.data),
    metadata: JSON.parse(row.metadata) as EventMetadata,
    createdAt: row.created_at,
  };
}
