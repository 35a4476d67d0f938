import { PGlite, type Transaction } from '@electric-sql/pglite';
import { migrate } from './migrations.ts';
import type { SqlDriver, SqlExecutor } from './sql-driver.ts';
import { SqlEventStore } from './sql-store.ts';
import type { StoreTestHooks } from './types.ts';

/** Wraps PGlite (one embedded connection; transactions run one at a time). */
export function pgliteDriver(db: PGlite): SqlDriver {
  const executor = (q: PGlite | Transaction): SqlExecutor => ({
    query: async <Row>(sql: string, params?: unknown[]) => ({ rows: (await q.query<Row>(sql, params)).rows }),
    exec: async (sql: string) => {
      await q.exec(sql);
    },
  });
  return {
    ...executor(db),
    transaction: (work) => db.transaction((tx) => work(executor(tx))),
    close: () => db.close(),
  };
}

/** Opens the embedded store in `dir` (or in memory when `dir` is undefined) and applies migrations. */
export async function openPgliteStore(
  dir: string | undefined,
  hooks?: StoreTestHooks,
): Promise<{ store: SqlEventStore; driver: SqlDriver }> {
  const db = dir === undefined ? new PGlite() : new PGlite(dir);
  await db.waitReady;
  const driver = pgliteDriver(db);
  await migrate(driver);
  // One process owns a PGlite directory, so in-process wake-ups are all the notification it needs.
  return { store: new SqlEventStore('pglite', driver, { hooks }), driver };
}
