import type { SqlDriver } from '../event-store/sql-driver.ts';
import { GroupCommit } from '../group-commit.ts';

export interface Checkpoint<State = unknown> {
  /** The schema version of the read model the snapshot holds (see `Projection.schemaVersion`). */
  schemaVersion: number;
  position: number;
  /** A snapshot of an in-memory read model at `position`, when the projection keeps one. */
  state?: State;
}

/** Where projections keep how far they got (and, for in-memory read models, a snapshot). */
export interface CheckpointStore {
  load<State>(name: string): Promise<Checkpoint<State> | undefined>;
  /** Serializes `checkpoint` synchronously, before it first yields, so later mutations do not leak in. */
  save<State>(name: string, checkpoint: Checkpoint<State>): Promise<void>;
  reset(name: string): Promise<void>;
}

/**
 * A snapshot serialized ahead of `save` (over several turns of the event loop: `stringifyInTurns`),
 * given as a checkpoint's `state`: `save` keeps its JSON text, the parts joined in order.
 */
export class SerializedSnapshot {
  constructor(readonly parts: readonly string[]) {}
}

/** The JSON text a store keeps for a checkpoint's `state`, in parts to be joined in order. */
export function snapshotParts(state: unknown): readonly string[] {
  return state instanceof SerializedSnapshot ? state.parts : [JSON.stringify(state)];
}

/** The JSON text a store keeps for a checkpoint's `state`. */
export function snapshotJson(state: unknown): string {
  return snapshotParts(state).join('');
}

export class MemoryCheckpointStore implements CheckpointStore {
  #items = new Map<string, { schemaVersion: number; position: number; state?: string }>();

  async load<State>(name: string): Promise<Checkpoint<State> | undefined> {
    const item = this.#items.get(name);
    if (item === undefined) return undefined;
    const { state, ...checkpoint } = item;
    return state === undefined ? checkpoint : { ...checkpoint, state: JSON.parse(state) as State };
  }

  async save<State>(name: string, checkpoint: Checkpoint<State>): Promise<void> {
    const { schemaVersion, position, state } = checkpoint;
    this.#items.set(name, {
      schemaVersion,
      position,
      ...(state === undefined ? {} : { state: snapshotJson(state) }),
    });
  }

  async reset(name: string): Promise<void> {
    this.#items.delete(name);
  }
}

/** A checkpoint as one row of `projection_checkpoints` takes it. */
interface CheckpointRow {
  name: string;
  version: number;
  position: number;
  /** JSON text, or null when the projection keeps no snapshot. */
  state: string | null;
}

/**
 * Saves made in the same turn of the event loop (the read models' snapshots, all at once) go in one
 * statement, so one commit: on the embedded store each commit waits for the disk, and appends wait
 * behind every one of them. A save is stored at the end of its turn: await it before a `load` or
 * `reset` of the same name (every caller does), and a batch whose statement fails fails every save
 * in it.
 */
const UPSERT = `ON CONFLICT (name) DO UPDATE
  SET version = excluded.version, position = excluded.position, state = excluded.state, updated_at = now()`;

/**
 * One row's values a parameter each, not arrays through `unnest`: an array parameter is sent as one
 * array literal, every quote and backslash of each snapshot escaped by the driver and unescaped by
 * the server (a second of a rebuild's save per 200 MB snapshot, measured).
 */
function saveRowsStatement(rows: readonly CheckpointRow[]): { sql: string; params: unknown[] } {
  const params = rows.flatMap((row) => [row.name, row.version, row.position, row.state]);
  const values = rows.map(
    (_, i) => `($${4 * i + 1}, $${4 * i + 2}::integer, $${4 * i + 3}::bigint, $${4 * i + 4}, now())`,
  );
  return {
    sql: `INSERT INTO projection_checkpoints (name, version, position, state, updated_at) VALUES ${values.join(', ')} ${UPSERT}`,
    params,
  };
}

export class SqlCheckpointStore implements CheckpointStore {
  readonly #saves = new GroupCommit<CheckpointRow, undefined>((_key, rows) => this.#saveRows(rows));

  constructor(private readonly db: SqlDriver) {}

  async load<State>(name: string): Promise<Checkpoint<State> | undefined> {
    const { rows } = await this.db.query<{ version: number; position: string; state: string | null }>(
      'SELECT version, position, state FROM projection_checkpoints WHERE name = $1',
      [name],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      schemaVersion: row.version,
      position: Number(row.position),
      ...(row.state === null ? {} : { state: JSON.parse(row.state) as State }),
    };
  }

  async save<State>(name: string, checkpoint: Checkpoint<State>): Promise<void> {
    await this.#saves.submit('checkpoints', {
      name,
      version: checkpoint.schemaVersion,
      position: checkpoint.position,
      state: checkpoint.state === undefined ? null : snapshotJson(checkpoint.state),
    });
  }

  async #saveRows(rows: CheckpointRow[]): Promise<undefined[]> {
    // A name saved twice in one batch: the later save wins, as it would one after the other (and one
    // statement may not update a row twice).
    const last = [...new Map(rows.map((row) => [row.name, row])).values()];
    const { sql, params } = saveRowsStatement(last);
    await this.db.query(sql, params);
    return rows.map(() => undefined);
  }

  async reset(name: string): Promise<void> {
    await this.db.query('DELETE FROM projection_checkpoints WHERE name = $1', [name]);
  }
}
