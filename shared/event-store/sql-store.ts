import { randomUUID } from 'node:crypto';
import { ChangeNotifier } from './change-notifier.ts';
import { type SqlDriver, type SqlExecutor, sqlState, UNIQUE_VIOLATION } from './sql-driver.ts';
import { catchUpThenLive } from './subscription.ts';
import {
  type AppendOptions,
  type AppendResult,
  assertDistinctIds,
  checkExpected,
  DuplicateEventId,
  type EventMetadata,
  type EventStore,
  type EventStoreKind,
  type NewEvent,
  NO_STREAM,
  type ReadAllOptions,
  type ReadStreamOptions,
  type StoredEvent,
  type StoreTestHooks,
  type SubscribeOptions,
  type SubscriptionItem,
} from './types.ts';

interface EventRow {
  position: string | number;
  stream_id: string;
  revision: string | number;
  event_id: string;
  type: string;
  data: unknown;
  metadata: EventMetadata;
  created_at: Date | string;
}

const COLUMNS = 'position, stream_id, revision, event_id, type, data, metadata, created_at';
/** Only rows whose transaction is older than every transaction still open: nothing can commit before them. */
const VISIBLE = 'transaction_id < pg_snapshot_xmin(pg_current_snapshot())';
const NOTIFY_CHANNEL = 'studio_events';
const MAX_ATTEMPTS = 5;
/** First key of the per-stream advisory locks (the two-int4 key space never meets single-bigint keys). */
const STREAM_LOCK_NAMESPACE = 8_600_002;
/** Positions reserve 16 bits for the index of an event inside its append. */
export const MAX_EVENTS_PER_APPEND = 65_536;

/** The SQL event store shared by PGlite (embedded) and PostgreSQL (`pg`): same schema, same statements. */
export class SqlEventStore implements EventStore {
  readonly changes = new ChangeNotifier();

  constructor(
    readonly kind: EventStoreKind,
    private readonly db: SqlDriver,
    private readonly options: {
      hooks?: StoreTestHooks;
      notifyOnCommit?: boolean;
      onClose?: () => Promise<void>;
    } = {},
  ) {}

  async append(streamId: string, events: readonly NewEvent[], options: AppendOptions): Promise<AppendResult> {
    assertDistinctIds(events);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction((tx) => this.#appendIn(tx, streamId, events, options));
      } catch (error) {
        // Two writers storing one event id at once: the loser retries and then sees the winner's row.
        if (sqlState(error) !== UNIQUE_VIOLATION || attempt >= MAX_ATTEMPTS) throw error;
      } finally {
        // Also after a rollback: it may have been what held back events other appends committed.
        this.changes.notify();
      }
    }
  }

  async #appendIn(
    tx: SqlExecutor,
    streamId: string,
    events: readonly NewEvent[],
    options: AppendOptions,
  ): Promise<AppendResult> {
    // Serialize appends to one stream before this transaction gets its id. A row lock alone is not
    // enough: waiting on a row another append has updated assigns our xid before the wait, so two
    // waiters could commit in the opposite order of their xids, and so of their positions, leaving a
    // stream's revisions out of order in the log. Behind this lock the xid comes after the previous
    // append to the stream has committed, hence is greater than its xid.
    await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [STREAM_LOCK_NAMESPACE, streamId]);
    const locked = await tx.query<{ revision: string | number }>(
      'SELECT revision FROM streams WHERE stream_id = $1 FOR UPDATE',
      [streamId],
    );
    const actual = locked.rows[0] ? Number(locked.rows[0].revision) : NO_STREAM;
    const existing = await this.#alreadyStored(tx, streamId, events);
    if (existing) return existing;
    checkExpected(streamId, options.expected ?? 'any', actual);
    if (events.length === 0) {
      const last = await tx.query<{ position: string }>(
        'SELECT position FROM events WHERE stream_id = $1 ORDER BY revision DESC LIMIT 1',
        [streamId],
      );
      return { nextExpectedRevision: actual, position: Number(last.rows[0]?.position ?? 0) };
    }

    if (events.length > MAX_EVENTS_PER_APPEND) {
      throw new RangeError(`at most ${MAX_EVENTS_PER_APPEND} events per append, got ${events.length}`);
    }
    const next = actual + events.length;
    if (actual === NO_STREAM) {
      await tx.query('INSERT INTO streams (stream_id, revision) VALUES ($1, $2)', [streamId, next]);
    } else {
      await tx.query('UPDATE streams SET revision = $2 WHERE stream_id = $1', [streamId, next]);
    }
    const inserted = await tx.query<{ position: string | number }>(
      `INSERT INTO events (position, stream_id, revision, event_id, type, data, metadata)
       SELECT (pg_current_xact_id()::text::bigint << 16) + x.n - 1,
              $1, x.revision, x.event_id, x.type, x.data::jsonb, $6::jsonb
       FROM unnest($2::bigint[], $3::uuid[], $4::text[], $5::text[]) WITH ORDINALITY AS x(revision, event_id, type, data, n)
       ORDER BY x.n
       RETURNING position`,
      [
        streamId,
        events.map((_, i) => actual + 1 + i),
        events.map((e) => e.id ?? randomUUID()),
        events.map((e) => e.type),
        events.map((e) => JSON.stringify(e.data ?? null)),
        JSON.stringify(options.metadata),
      ],
    );
    if (this.options.notifyOnCommit) await tx.query('SELECT pg_notify($1, $2)', [NOTIFY_CHANNEL, streamId]);
    await this.options.hooks?.beforeCommit?.(streamId);
    const position = Math.max(...inserted.rows.map((r) => Number(r.position)));
    return { nextExpectedRevision: next, position };
  }

  async #alreadyStored(
    tx: SqlExecutor,
    streamId: string,
    events: readonly NewEvent[],
  ): Promise<AppendResult | undefined> {
    const ids = events.flatMap((e) => (e.id ? [e.id] : []));
    if (ids.length === 0) return undefined;
    const found = await tx.query<{ event_id: string; stream_id: string; revision: string; position: string }>(
      'SELECT event_id, stream_id, revision, position FROM events WHERE event_id = ANY($1::uuid[])',
      [ids],
    );
    if (found.rows.length === 0) return undefined;
    const byId = new Map(found.rows.map((r) => [r.event_id, r]));
    if (events.some((e) => !e.id || byId.get(e.id)?.stream_id !== streamId)) {
      // Name the id that is re-used (first one stored in another stream), not a new id of the batch.
      const elsewhere = events.find((e) => e.id && byId.has(e.id) && byId.get(e.id)!.stream_id !== streamId);
      throw new DuplicateEventId((elsewhere ?? events.find((e) => e.id && byId.has(e.id)))!.id!);
    }
    const last = byId.get(events.at(-1)!.id!)!;
    return { nextExpectedRevision: Number(last.revision), position: Number(last.position) };
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    const result = await this.db.query<EventRow>(
      `SELECT ${COLUMNS} FROM events WHERE stream_id = $1 AND revision > $2 ORDER BY revision LIMIT $3`,
      [streamId, options.after ?? NO_STREAM, options.limit ?? null],
    );
    return result.rows.map(toStoredEvent);
  }

  async readAll(options: ReadAllOptions = {}): Promise<StoredEvent[]> {
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
      `SELECT ${COLUMNS} FROM events WHERE ${where} ORDER BY position LIMIT $2`,
      params,
    );
    return result.rows.map(toStoredEvent);
  }

  subscribe(options: SubscribeOptions): AsyncIterable<SubscriptionItem> {
    const { streamId } = options;
    const read =
      streamId === undefined
        ? (after: number, limit: number) => this.readAll({ after, limit })
        : (after: number, limit: number) => this.readStream(streamId, { after, limit });
    // On PostgreSQL a transaction no notification ends (a rollback or any other writer, even in
    // another database of the cluster) can hold committed events back; see `hasHiddenAfter`.
    const hidden =
      streamId === undefined && this.kind === 'postgres'
        ? (after: number) => this.#hasHiddenAfter(after)
        : undefined;
    return catchUpThenLive(options, read, this.changes, hidden);
  }

  /** Whether committed events after `position` exist that `readAll` does not show yet. */
  async #hasHiddenAfter(position: number): Promise<boolean> {
    const result = await this.db.query<{ hidden: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM events WHERE position > $1) AS hidden',
      [position],
    );
    return result.rows[0]?.hidden === true;
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

function toStoredEvent(row: EventRow): StoredEvent {
  return {
    id: row.event_id,
    streamId: row.stream_id,
    revision: Number(row.revision),
    position: Number(row.position),
    type: row.type,
    data: row.data,
    metadata: row.metadata,
    createdAt:
      row.created_at instanceof Date ? row.created_at.toISOString() : new Date(row.created_at).toISOString(),
  };
}

export const EVENTS_NOTIFY_CHANNEL = NOTIFY_CHANNEL;
