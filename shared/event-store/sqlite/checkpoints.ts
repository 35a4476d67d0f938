import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants, createDeflate, inflateSync } from 'node:zlib';
import type { Database } from 'better-sqlite3';
import { GroupCommit } from '../../group-commit.ts';
import { type Checkpoint, type CheckpointStore, snapshotParts } from '../../projections/checkpoints.ts';
import type { SqliteWriter } from './writer.ts';

interface CheckpointRow {
  name: string;
  version: number;
  position: number;
  /** JSON text, deflated from `DEFLATE_FROM` characters on, or null when the projection keeps no snapshot. */
  state: string | Buffer | null;
}

/**
 * Snapshots this long or longer are stored deflated. The log's one writer commits on the main
 * thread, so every byte written holds the other requests: the request log's 4.6 MB snapshot took
 * 15–23 ms to write as text, and its 170 KB deflated about 1 ms. Deflating runs on libuv's thread
 * pool, a part of the snapshot at a time, so the whole text is never encoded at once either.
 */
const DEFLATE_FROM = 64 * 1024;

async function deflated(parts: readonly string[]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await pipeline(Readable.from(parts), createDeflate({ level: constants.Z_BEST_SPEED }), async (deflate) => {
    for await (const chunk of deflate) chunks.push(chunk as Buffer);
  });
  return Buffer.concat(chunks);
}

/**
 * Checkpoints in the log's own file. Saves made in one turn of the event loop (the read models'
 * snapshots, all at once) share one transaction, so one sync, queued on the log's one writer.
 */
export class SqliteCheckpointStore implements CheckpointStore {
  readonly #saves = new GroupCommit<CheckpointRow, undefined>((_key, rows) => this.#saveRows(rows));
  readonly #load;
  /** Each name's save under way: a snapshot being deflated must not land after a later save of its name. */
  readonly #saving = new Map<string, Promise<void>>();

  constructor(
    private readonly writer: SqliteWriter,
    reader: Database,
  ) {
    this.#load = reader.prepare(
      'SELECT version, position, state, state_deflated FROM projection_checkpoints WHERE name = ?',
    );
  }

  async load<State>(name: string): Promise<Checkpoint<State> | undefined> {
    this.writer.assertRunning();
    const row = this.#load.get(name) as
      | { version: number; position: number; state: string | null; state_deflated: Buffer | null }
      | undefined;
    if (!row) return undefined;
    const json = row.state_deflated ? inflateSync(row.state_deflated).toString('utf8') : row.state;
    return {
      schemaVersion: row.version,
      position: row.position,
      ...(json === null ? {} : { state: JSON.parse(json) as State }),
    };
  }

  async save<State>(name: string, checkpoint: Checkpoint<State>): Promise<void> {
    const parts = checkpoint.state === undefined ? null : snapshotParts(checkpoint.state);
    const previous = this.#saving.get(name);
    const saving = (async () => {
      const length = parts?.reduce((sum, part) => sum + part.length, 0) ?? 0;
      const state = parts === null ? null : length >= DEFLATE_FROM ? await deflated(parts) : parts.join('');
      await previous?.catch(() => undefined);
      await this.#saves.submit('checkpoints', {
        name,
        version: checkpoint.schemaVersion,
        position: checkpoint.position,
        state,
      });
    })();
    this.#saving.set(name, saving);
    try {
      await saving;
    } finally {
      if (this.#saving.get(name) === saving) this.#saving.delete(name);
    }
  }

  #saveRows(rows: CheckpointRow[]): Promise<undefined[]> {
    return this.writer.run((db) => {
      const upsert = db.prepare(
        `INSERT INTO projection_checkpoints (name, version, position, state, state_deflated, updated_at)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET version = excluded.version, position = excluded.position,
           state = excluded.state, state_deflated = excluded.state_deflated, updated_at = excluded.updated_at`,
      );
      const now = new Date().toISOString();
      db.transaction(() => {
        for (const { name, version, position, state } of rows) {
          const deflated = Buffer.isBuffer(state);
          upsert.run(name, version, position, deflated ? null : state, deflated ? state : null, now);
        }
      }).immediate();
      return rows.map(() => undefined);
    });
  }

  async reset(name: string): Promise<void> {
    await this.#saving.get(name)?.catch(() => undefined);
    await this.writer.run((db) => {
      db.prepare('DELETE FROM projection_checkpoints WHERE name = ?').run(name);
    });
  }
}
