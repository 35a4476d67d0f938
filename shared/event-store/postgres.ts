import pg from 'pg';
import { migrate } from './migrations.ts';
import { PgListener } from './pg-listener.ts';
import type { SqlDriver, SqlExecutor } from './sql-driver.ts';
import { EVENTS_NOTIFY_CHANNEL, SqlEventStore } from './sql-store.ts';
import type { StoreTestHooks } from './types.ts';

export function postgresDriver(pool: pg.Pool): SqlDriver {
  const executor = (client: pg.Pool | pg.PoolClient): SqlExecutor => ({
    query: async <Row>(sql: string, params?: unknown[]) => ({
      rows: (await client.query(sql, params)).rows as Row[],
    }),
    exec: async (sql: string) => {
      await client.query(sql);
    },
  });
  return {
    ...executor(pool),
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work(executor(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

export interface PostgresStoreOptions {
  connectionString: string;
  poolSize?: number;
  hooks?: StoreTestHooks;
}

/**
 * PostgreSQL: a pool for reads and appends, plus one dedicated connection that LISTENs for commits
 * made by other processes, so subscribers wake up without polling.
 */
export async function openPostgresStore(
  options: PostgresStoreOptions,
): Promise<{ store: SqlEventStore; driver: SqlDriver }> {
  const pool = new pg.Pool({ connectionString: options.connectionString, max: options.poolSize ?? 20 });
  pool.on('error', () => undefined); // an idle client's error surfaces on its next use
  const driver = postgresDriver(pool);
  await migrate(driver);

  let wake = () => {};
  const listener = new PgListener(options.connectionString, EVENTS_NOTIFY_CHANNEL, () => wake());
  await listener.start();
  const store = new SqlEventStore('postgres', driver, {
    hooks: options.hooks,
    notifyOnCommit: true,
    onClose: () => listener.close(),
  });
  wake = () => store.changes.notify();
  return { store, driver };
}
