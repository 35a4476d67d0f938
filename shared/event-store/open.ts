import { access } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Checkpoint,
  type CheckpointStore,
  MemoryCheckpointStore,
  SqlCheckpointStore,
} from '../projections/checkpoints.ts';
import { MemoryEventStore } from './memory.ts';
import { migrate } from './migrations.ts';
import { redactConnectionString, redactUrl } from './redact.ts';
import type { SqliteSynchronous } from './sqlite/open.ts';
import { EventLogWontOpen, type EventStore, type EventStoreKind, type StoreTestHooks } from './types.ts';

export interface StoreConfig {
  kind: EventStoreKind;
  dataDir: string;
  /** `sqlite` only: when an append counts as stored (default `full`: on disk). */
  synchronous?: SqliteSynchronous;
  databaseUrl?: string;
  /** `kurrentdb` only: the server's connection string (default: the `KURRENTDB_URL` environment variable). */
  kurrentdbUrl?: string;
  hooks?: StoreTestHooks;
}

export interface OpenedStore {
  events: EventStore;
  checkpoints: CheckpointStore;
  /** Where the log lives, for people: a directory, a database URL without password, or "memory". */
  location: string;
  /** Resolves, with why, if the log is gone for good in this process (`SqlDriver.lost`): stop, and start again. */
  lost?: Promise<Error>;
  close(): Promise<void>;
}

/** Opens the configured log. Each adapter and its client library are loaded only when chosen. */
export async function openStore(config: StoreConfig): Promise<OpenedStore> {
  switch (config.kind) {
    case 'memory': {
      const events = new MemoryEventStore(config.hooks);
      return {
        events,
        checkpoints: new MemoryCheckpointStore(),
        location: 'memory',
        close: () => events.close(),
      };
    }
    case 'sqlite': {
      const file = sqliteLogFile(config.dataDir);
      await refuseEarlierLog(config.dataDir, file);
      const { openSqliteLog } = await import('./sqlite/open.ts');
      const log = openSqliteLog(file, { synchronous: config.synchronous, hooks: config.hooks });
      return {
        events: log.store,
        checkpoints: log.checkpoints,
        location: file,
        lost: log.lost,
        close: () => log.close(),
      };
    }
    case 'postgres': {
      if (!config.databaseUrl) throw new Error('STUDIO_EVENT_STORE=postgres needs DATABASE_URL');
      const { openPostgresStore } = await import('./postgres.ts');
      const { store, driver } = await openPostgresStore({
        connectionString: config.databaseUrl,
        hooks: config.hooks,
      });
      return {
        events: store,
        checkpoints: new SqlCheckpointStore(driver),
        location: redactUrl(config.databaseUrl),
        close: () => store.close(),
      };
    }
    case 'kurrentdb': {
      // The log lives in KurrentDB; checkpoints (and the read-model snapshots they carry) in
      // PostgreSQL when DATABASE_URL is set, else in this process's memory (rebuilt at each start).
      const url = config.kurrentdbUrl ?? process.env.KURRENTDB_URL;
      if (!url) throw new Error('STUDIO_EVENT_STORE=kurrentdb needs KURRENTDB_URL');
      const { openKurrentDbStore } = await import('./kurrentdb/open.ts');
      const events = await openKurrentDbStore({ connectionString: url, hooks: config.hooks });
      if (!config.databaseUrl) {
        return {
          events,
          checkpoints: new MemoryCheckpointStore(),
          location: redactConnectionString(url),
          close: () => events.close(),
        };
      }
      const [{ default: pg }, { postgresDriver }] = await Promise.all([
        import('pg'),
        import('./postgres.ts'),
      ]);
      const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 5 });
      pool.on('error', () => undefined); // an idle client's error surfaces on its next use
      const driver = postgresDriver(pool);
      try {
        await migrate(driver);
      } catch (error) {
        await Promise.allSettled([events.close(), driver.close()]);
        throw error;
      }
      return {
        events,
        // Under their own names: the same database may hold the checkpoints of a PostgreSQL log,
        // whose positions mean nothing in KurrentDB (a deployment switching stores keeps its DATABASE_URL).
        checkpoints: namespacedCheckpoints(new SqlCheckpointStore(driver), 'kurrentdb:'),
        location: `${redactConnectionString(url)} (checkpoints: ${redactUrl(config.databaseUrl)})`,
        close: async () => {
          await events.close();
          await driver.close();
        },
      };
    }
    default: {
      const unknown: never = config.kind;
      throw new Error(`unknown event store ${String(unknown)}`);
    }
  }
}

/** The embedded log's file in a data directory. */
export const sqliteLogFile = (dataDir: string): string => join(dataDir, 'log.sqlite');

/** Where versions before SQLite kept the embedded log (PGlite's data directory). */
export const earlierLogDir = (dataDir: string): string => join(dataDir, 'pglite');

/**
 * A data directory that holds only an earlier version's log is not started empty beside it (its
 * studios and tokens would seem gone): the user is told how to bring that history over.
 */
async function refuseEarlierLog(dataDir: string, file: string): Promise<void> {
  const exists = (path: string) =>
    access(path).then(
      () => true,
      () => false,
    );
  const earlier = earlierLogDir(dataDir);
  if ((await exists(file)) || !(await exists(join(earlier, 'PG_VERSION')))) return;
  throw new EventLogWontOpen(
    `${earlier} holds the log of an earlier Studio (PGlite); bring it over once with ` +
      `\`studio log copy --from pglite:${earlier} --to sqlite:${file}\`, then start again`,
  );
}

/** The same checkpoints, each name prefixed with `namespace`. */
function namespacedCheckpoints(inner: CheckpointStore, namespace: string): CheckpointStore {
  return {
    load: <State>(name: string) => inner.load<State>(`${namespace}${name}`),
    save: <State>(name: string, checkpoint: Checkpoint<State>) =>
      inner.save(`${namespace}${name}`, checkpoint),
    reset: (name: string) => inner.reset(`${namespace}${name}`),
  };
}
