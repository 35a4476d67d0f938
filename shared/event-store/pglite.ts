import { messageOf } from '../errors.ts';
import { migrate } from './migrations.ts';
import { initializePgliteDir } from './pglite-initdb.ts';
import { startPgliteThread } from './pglite-thread.ts';
import type { SqlDriver } from './sql-driver.ts';
import { SqlEventStore } from './sql-store.ts';
import { EventLogWontOpen, type StoreTestHooks } from './types.ts';

/**
 * Start parameters added to PGlite's own. PostgreSQL's default 128 MB of shared buffers live in the WASM heap and are never given back:
 * 16 MB keeps an embedded gateway ~130 MB smaller (measured on reopen), and the operating system's
 * page cache still holds the data files. PGlite starts with fsync off (`-F`); it is turned back on,
 * with the one WAL sync method that reaches the disk through `SyncedNodeFS` (pglite-synced-fs.mjs).
 * The PGlite thread prepares each statement once (pglite-statements.mjs); each run is still planned
 * with its parameters' values, as an unprepared statement is, never with a generic plan made while
 * the log was small (the append functions keep their own cached plans: infra/sql, migration 006).
 */
export const PGLITE_SETTINGS = [
  '-c',
  'shared_buffers=16MB',
  '-c',
  'fsync=on',
  '-c',
  'wal_sync_method=fsync',
  '-c',
  'plan_cache_mode=force_custom_plan',
];

/** Opens the embedded store in `dir` (or in memory when `dir` is undefined) and applies migrations. */
export async function openPgliteStore(
  dir: string | undefined,
  hooks?: StoreTestHooks,
): Promise<{ store: SqlEventStore; driver: SqlDriver }> {
  let driver: SqlDriver;
  try {
    if (dir !== undefined) await initializePgliteDir(dir, PGLITE_SETTINGS);
    driver = await startPgliteThread(dir, PGLITE_SETTINGS);
  } catch (error) {
    throw new EventLogWontOpen(
      `the embedded event log (${dir ?? 'in memory'}) did not open: ${messageOf(error)}`,
      {
        cause: error,
      },
    );
  }
  await migrate(driver);
  // One process owns a PGlite directory: in-process wake-ups are all the notification it needs, and
  // every event after today's head is one this store appends.
  const { rows } = await driver.query<{ head: string | number }>(
    'SELECT coalesce(max(position), 0) AS head FROM events',
  );
  const soleWriterAfter = Number(rows[0]?.head ?? 0);
  return {
    store: new SqlEventStore('pglite', driver, { hooks, batchesInFlight: 1, soleWriterAfter }),
    driver,
  };
}
