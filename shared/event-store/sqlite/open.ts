import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { messageOf } from '../../errors.ts';
import { EventLogWontOpen, type StoreTestHooks } from '../types.ts';
import { SqliteCheckpointStore } from './checkpoints.ts';
import { migrateSqlite } from './schema.ts';
import { SqliteEventStore } from './store.ts';
import { SqliteWriter } from './writer.ts';

/**
 * When an append counts as stored. `full` (the default): its commit is on disk, so a power loss
 * loses nothing acknowledged. `normal`: it survives the process being killed, but the last commits
 * before a power loss or an operating-system crash may be lost (docs/decisions.md, "The embedded
 * store").
 */
export type SqliteSynchronous = 'full' | 'normal';

export interface SqliteLog {
  store: SqliteEventStore;
  checkpoints: SqliteCheckpointStore;
  /** Resolves, with why, once the log has stopped for this process (an I/O error). */
  lost: Promise<Error>;
  /** When an append counts as stored, as the writer's connection reports it. */
  synchronous: SqliteSynchronous;
  close(): Promise<void>;
}

/** SQLite's numbers for its `synchronous` levels (0 is OFF, 3 EXTRA: never set here). */
const SYNCHRONOUS_LEVELS: Record<number, SqliteSynchronous> = { 1: 'normal', 2: 'full' };

/** The WAL is cut back to this size after a checkpoint, so one burst does not hold its space for good. */
const WAL_SIZE_LIMIT = 64 * 1024 * 1024;

/** Opens the log in `file`, creating it (and its directory) if need be. */
export function openSqliteLog(
  file: string,
  options: { synchronous?: SqliteSynchronous; hooks?: StoreTestHooks } = {},
): SqliteLog {
  const synchronous = options.synchronous ?? 'full';
  let writer: Database.Database | undefined;
  let reader: Database.Database | undefined;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    // Made by us, readable by its owner only: SQLite gives its WAL and shared-memory files the same mode.
    closeSync(openSync(file, 'a', 0o600));
    writer = new Database(file);
    writer.pragma('journal_mode = WAL');
    writer.pragma(`synchronous = ${synchronous}`);
    // macOS: a plain fsync leaves the data in the drive's cache; F_FULLFSYNC reaches the medium.
    writer.pragma(`fullfsync = ${synchronous === 'full' ? 'ON' : 'OFF'}`);
    writer.pragma(`checkpoint_fullfsync = ${synchronous === 'full' ? 'ON' : 'OFF'}`);
    writer.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
    migrateSqlite(writer);
    reader = new Database(file, { readonly: true });
  } catch (error) {
    reader?.close();
    writer?.close();
    throw new EventLogWontOpen(`the embedded event log (${file}) did not open: ${messageOf(error)}`, {
      cause: error,
    });
  }
  const log = new SqliteWriter(writer);
  const connections = [reader, writer];
  const store = new SqliteEventStore(log, reader, options.hooks, async () => {
    await log.idle();
    for (const db of connections) if (db.open) db.close();
  });
  return {
    store,
    checkpoints: new SqliteCheckpointStore(log, reader),
    lost: log.lost,
    synchronous: SYNCHRONOUS_LEVELS[writer.pragma('synchronous', { simple: true }) as number] ?? 'normal',
    close: () => store.close(),
  };
}
