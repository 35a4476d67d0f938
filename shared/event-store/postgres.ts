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
 * made by other processes, so subscribers wake up without polling. The notifications of this
 * process's own commits come back too; they are passed over (by the sending backend's process id,
 * one of the pool's connections), since the store wakes its subscribers itself once a commit
 * returns, and each such echo cost every subscriber a read that found nothing.
 */
export async function openPostgresStore(
  options: PostgresStoreOptions,
): Promise<{ store: SqlEventStore; driver: SqlDriver }> {
  const pool = new pg.Pool({ connectionString: options.connectionString, max: options.poolSize ?? 20 });
  pool.on('error', () => undefined); // an idle client's error surfaces on its next use
  const ownBackends = backendsOf(pool);
  const driver = postgresDriver(pool);
  await migrate(driver);

  let wake = () => {};
  const listener = new PgListener(options.connectionString, EVENTS_NOTIFY_CHANNEL, (sender) => {
    if (sender === undefined || !ownBackends.has(sender)) wake();
  });
  await listener.start();
  const store = new SqlEventStore('postgres', driver, {
    hooks: options.hooks,
    notifyOnCommit: true,
    onClose: () => listener.close(),
  });
  wake = () => store.changes.notify();
  return { store, driver };
}

/**
 * The process ids of the backends serving the pool's connections, kept while each is open. An id
 * counts only once the backend confirms it (`pg_backend_pid()`): behind a connection pooler the id
 * a client is given is the pooler's own, which could be any backend's, and the backend serving a
 * connection changes from one transaction to the next, so nothing is passed over there.
 */
function backendsOf(pool: pg.Pool): Set<number> {
  const ids = new Set<number>();
  const removed = new WeakSet<pg.PoolClient>();
  const idOf = (client: pg.PoolClient) => (client as pg.PoolClient & { processID?: number | null }).processID;
  pool.on('connect', (client) => {
    const id = idOf(client);
    // Queued before the query the connection was opened for, so it runs first.
    client
      .query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
      .then(({ rows }) => {
        if (typeof id === 'number' && rows[0]?.pid === id && !removed.has(client)) ids.add(id);
      })
      .catch(() => undefined);
  });
  pool.on('remove', (client) => {
    removed.add(client);
    const id = idOf(client);
    if (typeof id === 'number') ids.delete(id);
  });
  return ids;
}
