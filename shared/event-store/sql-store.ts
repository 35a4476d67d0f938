import { AppendBatcher } from './append-batcher.ts';
import { ChangeNotifier } from './change-notifier.ts';
import { newEventId } from './event-id.ts';
import { fromJsonbText, toJsonbText } from './json-codec.ts';
import {
  type AppendRow,
  appendBatch,
  appendResult,
  CREATED_AT_FORMAT,
  type PendingAppend,
} from './sql-append.ts';
import { type SqlDriver, sqlState, UNIQUE_VIOLATION } from './sql-driver.ts';
import { subscribeThroughReads } from './subscription.ts';
import {
  type AppendOptions,
  type AppendResult,
  assertAppendable,
  assertReadableAll,
  assertStorableIdentifier,
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
} from './types.ts';

export interface EventRow {
  position: string | number;
  stream_id: string;
  revision: string | number;
  event_id: string;
  type: string;
  /** `jsonb` as text, decoded by `fromJsonbText`. */
  data: string;
  metadata: string;
  /** Already ISO 8601 UTC. */
  created_at: string;
}

/**
 * `jsonb` as text, parsed once by `fromJsonbText` (the drivers would parse it, then the codec look at
 * it again), and the time formatted by the server as `toISOString` would (no Date parsed per row).
 */
export const EVENT_COLUMNS =
  'position, stream_id, revision, event_id, type, data::text AS data, metadata::text AS metadata, ' +
  `to_char(created_at AT TIME ZONE 'UTC', ${CREATED_AT_FORMAT}) AS created_at`;
/**
 * Only rows whose transaction is older than every transaction still open: nothing can commit before
 * them. A subquery, so the snapshot is taken once per statement rather than once per row.
 */
const VISIBLE = 'transaction_id < (SELECT pg_snapshot_xmin(pg_current_snapshot()))';
const NOTIFY_CHANNEL = 'studio_events';
/**
 * The first event after `$1`, visible or not. Not `EXISTS (…)`: for that the planner may pick a
 * sequential scan, expecting to meet a match soon (a third of the rows, without statistics), where
 * the matches are the newest rows, if any: every call read the whole log.
 */
export const FIRST_AFTER = 'SELECT position FROM events WHERE position > $1 ORDER BY position LIMIT 1';
const MAX_ATTEMPTS = 5;

const IMPORT_EVENTS = `INSERT INTO events (position, stream_id, revision, event_id, type, data, metadata, created_at)
  SELECT position, stream_id, revision, event_id, type, data::jsonb, metadata::jsonb, created_at
  FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])
    AS r(position, stream_id, revision, event_id, type, data, metadata, created_at)`;
const IMPORT_STREAMS = `INSERT INTO streams (stream_id, revision)
  SELECT stream_id, max(revision) FROM unnest($1::text[], $2::bigint[]) AS r(stream_id, revision) GROUP BY stream_id
  ON CONFLICT (stream_id) DO UPDATE SET revision = greatest(streams.revision, excluded.revision)`;
/**
 * The offset the positions this database makes need so that the next transactions' come after
 * `$1`, beside the one its setting holds now (infra/sql/007).
 */
const OFFSETS = `SELECT ($1::bigint >> 16) + 1 - pg_current_xact_id()::text::bigint AS needed,
  coalesce((SELECT substring(c FROM 'studio\\.xid_offset=(-?[0-9]+)') FROM pg_db_role_setting s,
    unnest(s.setconfig) AS c WHERE s.setrole = 0 AND c LIKE 'studio.xid_offset=%'
      AND s.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())), '0') AS held`;
/** Positions reserve 16 bits for the index of an event inside its transaction (append or batch). */
export const MAX_EVENTS_PER_APPEND = 65_536;

/** Batches of appends committing at once, each its own transaction on its own connection of the pool. */
const BATCHES_IN_FLIGHT = 2;
const MAX_APPENDS_PER_BATCH = 500;

type Outcome = { row: AppendRow } | { error: unknown };

/** The event store on PostgreSQL (`pg`): the schema and functions of infra/sql. */
export class SqlEventStore implements ImportingStore {
  readonly changes = new ChangeNotifier();

  readonly kind = 'postgres' as const;

  constructor(
    private readonly db: SqlDriver,
    private readonly options: {
      hooks?: StoreTestHooks;
      notifyOnCommit?: boolean;
      onClose?: () => Promise<void>;
    } = {},
  ) {
    this.#batcher = new AppendBatcher((batch) => this.#commitBatch(batch), {
      maxInFlight: BATCHES_IN_FLIGHT,
      maxItems: MAX_APPENDS_PER_BATCH,
      maxWeight: MAX_EVENTS_PER_APPEND,
      weight: (append) => append.ids.length,
    });
  }

  readonly #batcher: AppendBatcher<PendingAppend, Outcome>;

  async append(streamId: string, events: readonly NewEvent[], options: AppendOptions): Promise<AppendResult> {
    assertAppendable(streamId, events);
    if (events.length > MAX_EVENTS_PER_APPEND) {
      throw new RangeError(`at most ${MAX_EVENTS_PER_APPEND} events per append, got ${events.length}`);
    }
    const append: PendingAppend = {
      streamId,
      expected: options.expected ?? 'any',
      ids: events.map((e) => e.id ?? newEventId()),
      types: events.map((e) => e.type),
      data: events.map((e) => toJsonbText(e.data)),
      metadata: toJsonbText(options.metadata),
    };
    const outcome = await this.#batcher.submit(append);
    if ('error' in outcome) throw outcome.error;
    return appendResult(append, outcome.row);
  }

  /** One batch: its appends in one transaction, each with its own outcome. */
  async #commitBatch(batch: PendingAppend[]): Promise<Outcome[]> {
    try {
      return (await this.#commitOnce(batch)).map((row) => ({ row }));
    } catch (error) {
      // Two writers storing one event id at once: the loser's batch rolled back as a whole. Each
      // of its appends goes again alone, so the race fails none of the others.
      if (sqlState(error) !== UNIQUE_VIOLATION) throw error;
      return Promise.all(batch.map((append) => this.#commitAlone(append)));
    } finally {
      // Also after a rollback: it may have been what held back events other appends committed.
      this.changes.notify();
    }
  }

  async #commitAlone(append: PendingAppend): Promise<Outcome> {
    for (let attempt = 2; ; attempt++) {
      try {
        const [row] = await this.#commitOnce([append]);
        return { row: row! };
      } catch (error) {
        // The loser of the race retries and then sees the winner's row.
        if (sqlState(error) !== UNIQUE_VIOLATION || attempt >= MAX_ATTEMPTS) return { error };
      } finally {
        this.changes.notify();
      }
    }
  }

  async #commitOnce(batch: PendingAppend[]): Promise<AppendRow[]> {
    const notify = this.options.notifyOnCommit === true;
    const hook = this.options.hooks?.beforeCommit;
    // One statement is its own transaction; only the test hook needs one held open around it.
    const rows = hook
      ? await this.db.transaction(async (tx) => {
          const rows = await appendBatch(tx, batch, notify);
          for (const [i, row] of rows.entries()) if (row.outcome === 'ok') await hook(batch[i]!.streamId);
          return rows;
        })
      : await appendBatch(this.db, batch, notify);
    return rows;
  }

  async importEvents(events: readonly StoredEvent[]): Promise<void> {
    if (events.length === 0) return;
    const last = events.at(-1)!.position;
    try {
      await this.db.transaction(async (tx) => {
        // No append of this database's own slips in between: its position could not be after these.
        await tx.query('LOCK TABLE events IN EXCLUSIVE MODE');
        const { rows } = await tx.query<{ head: string | null }>('SELECT max(position) AS head FROM events');
        const head = Number(rows[0]?.head ?? 0);
        if (events[0]!.position <= head) {
          throw new RangeError(`an imported event's position ${events[0]!.position} is not after ${head}`);
        }
        await tx.query(IMPORT_EVENTS, [
          events.map((e) => e.position),
          events.map((e) => e.streamId),
          events.map((e) => e.revision),
          events.map((e) => e.id),
          events.map((e) => e.type),
          events.map((e) => toJsonbText(e.data)),
          events.map((e) => toJsonbText(e.metadata)),
          events.map((e) => e.createdAt),
        ]);
        await tx.query(IMPORT_STREAMS, [events.map((e) => e.streamId), events.map((e) => e.revision)]);
        const { rows: offsets } = await tx.query<{ needed: string; held: string }>(OFFSETS, [last]);
        const { needed, held } = offsets[0]!;
        // A setting of the database, read by each session as it starts (the copy's gateways start
        // after it), and of this session from now on.
        if (/^-?\d+$/.test(needed) && BigInt(needed) > BigInt(held))
          await tx.exec(
            `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET studio.xid_offset = %L', current_database(), '${needed}'); ` +
              `PERFORM set_config('studio.xid_offset', '${needed}', false); END $$`,
          );
      });
    } finally {
      this.changes.notify();
    }
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    assertStorableIdentifier('stream id', streamId);
    await this.options.hooks?.beforeRead?.({ kind: 'readStream', streamId });
    const result = await this.db.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = $1 AND revision > $2 ORDER BY revision LIMIT $3`,
      [streamId, options.after ?? NO_STREAM, options.limit ?? null],
    );
    return result.rows.map(toStoredEvent);
  }

  async readAll(options: ReadAllOptions = {}): Promise<StoredEvent[]> {
    assertReadableAll(options);
    // Every subscriber of the whole log (the read models, the sealer…) wakes on the same append and
    // asks for the same page: while one such read is under way, the others share its rows (stored
    // events are never mutated by their readers) instead of decoding them again. Only a read begun
    // since the last change notification is shared: it shows every append notified so far, so a
    // subscriber that saw that notification misses nothing by taking it.
    if (options.streamId !== undefined || options.types !== undefined) return this.#readAll(options);
    const key = `${this.changes.version}:${options.after ?? 0}:${options.limit ?? ''}`;
    const shared = this.#pageReads.get(key);
    if (shared) return shared;
    const read = this.#readAll(options).finally(() => this.#pageReads.delete(key));
    this.#pageReads.set(key, read);
    return read;
  }

  /** Reads of whole-log pages under way, by `after:limit`. */
  readonly #pageReads = new Map<string, Promise<StoredEvent[]>>();

  async #readAll(options: ReadAllOptions): Promise<StoredEvent[]> {
    await this.options.hooks?.beforeRead?.({ kind: 'readAll', options });
    const params: unknown[] = [options.after ?? 0, options.limit ?? null];
    let where = `position > $1 AND ${VISIBLE}`;
    if (options.streamId !== undefined) {
      params.push(options.streamId);
      where += ` AND stream_id = $${params.length}`;
    }
    if (options.types !== undefined) {
      params.push(options.types);
      where += ` AND type = ANY($${params.length}::text[])`;
    }
    const result = await this.db.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE ${where} ORDER BY position LIMIT $2`,
      params,
    );
    return result.rows.map(toStoredEvent);
  }

  subscribePages(options: SubscribeOptions): AsyncIterable<SubscriptionPage> {
    // On PostgreSQL a transaction no notification ends (a rollback or any other writer, even in
    // another database of the cluster) can hold committed events back; see `hasHiddenAfter`.
    const hidden =
      options.streamId === undefined ? (after: number) => this.#hasHiddenAfter(after) : undefined;
    return subscribeThroughReads(this, this.changes, options, { hidden });
  }

  /** Whether committed events after `position` exist that `readAll` does not show yet. */
  async #hasHiddenAfter(position: number): Promise<boolean> {
    const result = await this.db.query<{ position: string }>(FIRST_AFTER, [position]);
    return result.rows.length > 0;
  }

  async headPosition(): Promise<number> {
    const result = await this.db.query<{ position: string | null }>(
      `SELECT position FROM events WHERE ${VISIBLE} ORDER BY position DESC LIMIT 1`,
    );
    return Number(result.rows[0]?.position ?? 0);
  }

  async close(): Promise<void> {
    this.changes.notify();
    await this.options.onClose?.();
    await this.db.close();
  }
}

export function toStoredEvent(row: EventRow): StoredEvent {
  return {
    id: row.event_id,
    streamId: row.stream_id,
    revision: Number(row.revision),
    position: Number(row.position),
    type: row.type,
    data: fromJsonbText(row.data),
    metadata: fromJsonbText(row.metadata) as EventMetadata,
    createdAt: row.created_at,
  };
}

export const EVENTS_NOTIFY_CHANNEL = NOTIFY_CHANNEL;
