import { randomUUID } from 'node:crypto';
import { ChangeNotifier } from './change-notifier.ts';
import { fromJsonb, toJsonbText } from './json-codec.ts';
import { type SqlDriver, sqlState, UNIQUE_VIOLATION } from './sql-driver.ts';
import { catchUpThenLive } from './subscription.ts';
import {
  type AppendOptions,
  type AppendResult,
  assertAppendable,
  assertReadableAll,
  assertStorableIdentifier,
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
  WrongExpectedRevision,
} from './types.ts';

interface EventRow {
  position: string | number;
  stream_id: string;
  revision: string | number;
  event_id: string;
  type: string;
  /** As stored: decoded by `fromJsonb`. */
  data: unknown;
  metadata: unknown;
  created_at: Date | string;
}

const COLUMNS = 'position, stream_id, revision, event_id, type, data, metadata, created_at';
/** Only rows whose transaction is older than every transaction still open: nothing can commit before them. */
const VISIBLE = 'transaction_id < pg_snapshot_xmin(pg_current_snapshot())';
const NOTIFY_CHANNEL = 'studio_events';
const MAX_ATTEMPTS = 5;
/** Positions reserve 16 bits for the index of an event inside its append. */
export const MAX_EVENTS_PER_APPEND = 65_536;

const APPEND =
  'SELECT outcome, revision, pos, clash FROM studio_append($1, $2, $3::uuid[], $4::text[], $5::text[], $6, $7)';

interface AppendRow {
  outcome: 'ok' | 'duplicate' | 'duplicate_id' | 'wrong_expected' | 'empty';
  revision: string | number | null;
  pos: string | number | null;
  clash: string | null;
}

function appendResult(
  streamId: string,
  expected: AppendOptions['expected'] & {},
  row: AppendRow | undefined,
): AppendResult {
  switch (row?.outcome) {
    case 'ok':
    case 'duplicate':
    case 'empty':
      return { nextExpectedRevision: Number(row.revision), position: Number(row.pos) };
    case 'duplicate_id':
      throw new DuplicateEventId(row.clash ?? 'unknown');
    case 'wrong_expected':
      throw new WrongExpectedRevision(streamId, expected, Number(row.revision));
    default:
      throw new Error(`studio_append answered ${JSON.stringify(row)}`);
  }
}

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
    assertAppendable(streamId, events);
    if (events.length > MAX_EVENTS_PER_APPEND) {
      throw new RangeError(`at most ${MAX_EVENTS_PER_APPEND} events per append, got ${events.length}`);
    }
    const expected = options.expected ?? 'any';
    const params = [
      streamId,
      String(expected),
      events.map((e) => e.id ?? randomUUID()),
      events.map((e) => e.type),
      events.map((e) => toJsonbText(e.data)),
      toJsonbText(options.metadata),
      this.options.notifyOnCommit === true,
    ];
    const hook = this.options.hooks?.beforeCommit;
    for (let attempt = 1; ; attempt++) {
      try {
        // One statement is its own transaction; only the test hook needs one held open around it.
        const rows = hook
          ? await this.db.transaction(async (tx) => {
              const result = await tx.query<AppendRow>(APPEND, params);
              if (result.rows[0]?.outcome === 'ok') await hook(streamId);
              return result.rows;
            })
          : (await this.db.query<AppendRow>(APPEND, params)).rows;
        return appendResult(streamId, expected, rows[0]);
      } catch (error) {
        // Two writers storing one event id at once: the loser retries and then sees the winner's row.
        if (sqlState(error) !== UNIQUE_VIOLATION || attempt >= MAX_ATTEMPTS) throw error;
      } finally {
        // Also after a rollback: it may have been what held back events other appends committed.
        this.changes.notify();
      }
    }
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    assertStorableIdentifier('stream id', streamId);
    await this.options.hooks?.beforeRead?.({ kind: 'readStream', streamId });
    const result = await this.db.query<EventRow>(
      `SELECT ${COLUMNS} FROM events WHERE stream_id = $1 AND revision > $2 ORDER BY revision LIMIT $3`,
      [streamId, options.after ?? NO_STREAM, options.limit ?? null],
    );
    return result.rows.map(toStoredEvent);
  }

  async readAll(options: ReadAllOptions = {}): Promise<StoredEvent[]> {
    assertReadableAll(options);
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
    data: fromJsonb(row.data),
    metadata: fromJsonb(row.metadata) as EventMetadata,
    createdAt:
      row.created_at instanceof Date ? row.created_at.toISOString() : new Date(row.created_at).toISOString(),
  };
}

export const EVENTS_NOTIFY_CHANNEL = NOTIFY_CHANNEL;
