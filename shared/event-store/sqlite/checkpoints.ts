import type { Database } from 'better-sqlite3';
import { GroupCommit } from '../../group-commit.ts';
import type { Checkpoint, CheckpointStore } from '../../projections/checkpoints.ts';
import type { SqliteWriter } from './writer.ts';

interface CheckpointRow {
  name: string;
  version: number;
  position: number;
  /** JSON text, or null when the projection keeps no snapshot. */
  state: string | null;
}

/**
 * Checkpoints in the log's own file. Saves made in one turn of the event loop (the read models'
 * snapshots, all at once) share one transaction, so one sync, queued on the log's one writer.
 */
export class SqliteCheckpointStore implements CheckpointStore {
  readonly #saves = new GroupCommit<CheckpointRow, undefined>((_key, rows) => this.#saveRows(rows));
  readonly #load;

  constructor(
    private readonly writer: SqliteWriter,
    reader: Database,
  ) {
    this.#load = reader.prepare('SELECT version, position, state FROM projection_checkpoints WHERE name = ?');
  }

  async load<State>(name: string): Promise<Checkpoint<State> | undefined> {
    this.writer.assertRunning();
    const row = this.#load.get(name) as Omit<CheckpointRow, 'name'> | undefined;
    if (!row) return undefined;
    return {
      schemaVersion: row.version,
      position: row.position,
      ...(row.state === null ? {} : { state: JSON.parse(row.state) as State }),
    };
  }

  async save<State>(name: string, checkpoint: Checkpoint<State>): Promise<void> {
    await this.#saves.submit('checkpoints', {
      name,
      version: checkpoint.schemaVersion,
      position: checkpoint.position,
      state: checkpoint.state === undefined ? null : JSON.stringify(checkpoint.state),
    });
  }

  #saveRows(rows: CheckpointRow[]): Promise<undefined[]> {
    return this.writer.run((db) => {
      const upsert = db.prepare(
        `INSERT INTO projection_checkpoints (name, version, position, state, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET version = excluded.version, position = excluded.position,
           state = excluded.state, updated_at = excluded.updated_at`,
      );
      const now = new Date().toISOString();
      db.transaction(() => {
        for (const row of rows) upsert.run(row.name, row.version, row.position, row.state, now);
      }).immediate();
      return rows.map(() => undefined);
    });
  }

  async reset(name: string): Promise<void> {
    await this.writer.run((db) => {
      db.prepare('DELETE FROM projection_checkpoints WHERE name = ?').run(name);
    });
  }
}
