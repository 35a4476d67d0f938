import { fromJsonb, toJsonbText } from '../event-store/json-codec.ts';
import type { SqlDriver } from '../event-store/sql-driver.ts';

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

export class MemoryCheckpointStore implements CheckpointStore {
  #items = new Map<string, string>();

  async load<State>(name: string): Promise<Checkpoint<State> | undefined> {
    const json = this.#items.get(name);
    return json === undefined ? undefined : (JSON.parse(json) as Checkpoint<State>);
  }

  async save<State>(name: string, checkpoint: Checkpoint<State>): Promise<void> {
    this.#items.set(name, JSON.stringify(checkpoint));
  }

  async reset(name: string): Promise<void> {
    this.#items.delete(name);
  }
}

export class SqlCheckpointStore implements CheckpointStore {
  constructor(private readonly db: SqlDriver) {}

  async load<State>(name: string): Promise<Checkpoint<State> | undefined> {
    const { rows } = await this.db.query<{ version: number; position: string; state: unknown }>(
      'SELECT version, position, state FROM projection_checkpoints WHERE name = $1',
      [name],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      schemaVersion: row.version,
      position: Number(row.position),
      ...(row.state === null ? {} : { state: fromJsonb(row.state) as State }),
    };
  }

  async save<State>(name: string, checkpoint: Checkpoint<State>): Promise<void> {
    await this.db.query(
      `INSERT INTO projection_checkpoints (name, version, position, state, updated_at)
       VALUES ($1, $2, $3, $4::jsonb, now())
       ON CONFLICT (name) DO UPDATE SET version = $2, position = $3, state = $4::jsonb, updated_at = now()`,
      [
        name,
        checkpoint.schemaVersion,
        checkpoint.position,
        checkpoint.state === undefined ? null : toJsonbText(checkpoint.state),
      ],
    );
  }

  async reset(name: string): Promise<void> {
    await this.db.query('DELETE FROM projection_checkpoints WHERE name = $1', [name]);
  }
}
