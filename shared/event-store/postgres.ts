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
  const ownBackends = new OwnBackends();
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize ?? 20,
    onConnect: (client) => ownBackends.confirm(client),
  });
  pool.on('error', () => undefined); // an idle client's error surfaces on its next use
  pool.on('remove', (client) => ownBackends.forget(client));
  const driver = postgresDriver(pool);
  await migrate(driver);

  let wake = () => {};
  const listener = new PgListener(options.connectionString, EVENTS_NOTIFY_CHANNEL, (sender) => {
    if (sender === undefined || !ownBackends.has(sender)) wake();
  });
  await listener.start();
  const store = new SqlEventStore(driver, {
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
 * connection changes from one transaction to the next, so nothing is passed over there. Asked as
 * the pool opens a connection, before the connection is handed out (one query at a time on it).
 */
class OwnBackends {
  readonly #ids = new Set<number>();
  readonly #removed = new WeakSet<pg.ClientBase>();

  has(id: number): boolean {
    return this.#ids.has(id);
  }

  async confirm(client: pg.ClientBase): Promise<void> {
    const id = processIdOf(client);
    // A connection that cannot say is used all the same: its echoes only cost subscribers a read.
    const pid = await client
      .query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
      .then(({ rows }) => rows[0]?.pid)
      .catch(() => undefined);
    if (typeof id === 'number' && pid === id && !this.#removed.has(client)) this.#ids.add(id);
  }

  forget(client: pg.ClientBase): void {
    this.#removed.add(client);
    const id = processIdOf(client);
    if (typeof id === 'number') this.#ids.delete(id);
  }
}

const processIdOf = (client: pg.ClientBase) =>
  (client as pg.ClientBase & { processID?: number | null }).processID;
