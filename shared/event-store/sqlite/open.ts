import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { messageOf } from '../../errors.ts';
import { EventLogWontOpen, type StoreTestHooks } from '../types.ts';
import { CHECKPOINTS, Checkpointer } from './checkpointer.ts';
import { SqliteCheckpointStore } from './checkpoints.ts';
import { migrateSqlite } from './schema.ts';
import { SqliteEventStore } from './store.ts';
import { WalReserve } from './wal-reserve.ts';
import { WalSync } from './wal-sync.ts';
import { SqliteWriter, sqliteCode } from './writer.ts';

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
  close(): Promise<void>;
}

/** Opens the log in `file`, creating it (and its directory) if need be. */
export function openSqliteLog(
  file: string,
  options: {
    synchronous?: SqliteSynchronous;
    hooks?: StoreTestHooks;
    /** Tests: when the checkpointer copies the WAL into the file. */
    checkpoints?: Partial<typeof CHECKPOINTS>;
  } = {},
): SqliteLog {
  const synchronous = options.synchronous ?? 'full';
  const checkpoints = { ...CHECKPOINTS, ...options.checkpoints };
  let writer: Database.Database | undefined;
  let reader: Database.Database | undefined;
  let reserve: WalReserve;
  let wal: WalSync | undefined;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    // Made by us, readable by its owner only: SQLite gives its WAL and shared-memory files the same mode.
    closeSync(openSync(file, 'a', 0o600));
    writer = new Database(file);
    writer.pragma('journal_mode = WAL');
    // `full` is kept by syncing the WAL after each commit off the event loop (wal-sync.ts), not by
    // SQLite's own sync, which would hold the event loop for the disk.
    writer.pragma('synchronous = normal');
    // macOS: a plain fsync leaves the data in the drive's cache; F_FULLFSYNC reaches the medium.
    writer.pragma(`fullfsync = ${synchronous === 'full' ? 'ON' : 'OFF'}`);
    writer.pragma(`checkpoint_fullfsync = ${synchronous === 'full' ? 'ON' : 'OFF'}`);
    // Checkpoints are the checkpointer thread's (checkpointer.ts). A WAL that a burst made larger
    // is cut back to this size once it starts again from its beginning.
    writer.pragma('wal_autocheckpoint = 0');
    writer.pragma(`journal_size_limit = ${checkpoints.walBytes}`);
    migrateSqlite(writer);
    reader = new Database(file, { readonly: true });
    if (synchronous === 'full') wal = new WalSync(file);
    // Past 5/8 of `walBytes` a commit waits for the checkpointer to copy the rest (`most`): the
    // WAL starts again from its beginning within the file kept (`walBytes`) before the room made
    // ahead of it (a quarter of that) runs short, so under steady load no room is made.
    reserve = new WalReserve(
      file,
      writer.pragma('page_size', { simple: true }) as number,
      checkpoints.walBytes / 4,
      (checkpoints.walBytes * 5) / 8,
      // Called only from a write, once the checkpointer below exists.
      () => checkpointer.checkpointNow(),
    );
  } catch (error) {
    wal?.close();
    reader?.close();
    writer?.close();
    throw new EventLogWontOpen(`the embedded event log (${file}) did not open: ${messageOf(error)}`, {
      cause: error,
    });
  }
  const log = new SqliteWriter(writer, reserve, wal);
  const checkpointer = new Checkpointer({ file, synchronous, ...checkpoints }, (error) =>
    log.stop(
      `its checkpoint failed: ${error.message}${sqliteCode(error) ? `: ${sqliteCode(error)}` : ''}`,
      error,
    ),
  );
  const connections = [reader, writer];
  const store = new SqliteEventStore(log, reader, options.hooks, async () => {
    await log.idle();
    reserve.close();
    wal?.close();
    // A log stopped by an I/O error is left as the disk has it: closing the last connection would
    // copy the WAL into the file and remove it, writes the same failing disk may drop after
    // reporting them done, taking acknowledged commits with them. The next start recovers the WAL.
    if (log.stopped) return checkpointer.abandon();
    await checkpointer.close();
    // The writer last: closing the last connection copies what the WAL holds into the file.
    for (const db of connections) if (db.open) db.close();
  });
  return {
    store,
    checkpoints: new SqliteCheckpointStore(log, reader),
    lost: log.lost,
    close: () => store.close(),
  };
}
