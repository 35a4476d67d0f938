import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { migrate } from '../../shared/event-store/migrations.ts';
import type { SqlDriver, SqlExecutor } from '../../shared/event-store/sql-driver.ts';
import { SqlEventStore } from '../../shared/event-store/sql-store.ts';

/**
 * A log as Studio kept it before SQLite: PostgreSQL's schema (infra/sql) in a PGlite data directory,
 * written through the SQL adapter, so positions are made from transaction ids as they were then.
 */
export async function earlierPgliteLog(dir: string): Promise<SqlEventStore> {
  await mkdir(dir, { recursive: true });
  const db = await PGlite.create(dir);
  const executor = (q: Pick<PGlite, 'query' | 'exec'>): SqlExecutor => ({
    query: async <Row>(sql: string, params?: unknown[]) => ({ rows: (await q.query<Row>(sql, params)).rows }),
    exec: async (sql: string) => {
      await q.exec(sql);
    },
  });
  const driver: SqlDriver = {
    ...executor(db),
    transaction: (work) => db.transaction((tx) => work(executor(tx))),
    close: () => db.close(),
  };
  await migrate(driver);
  return new SqlEventStore(driver);
}
