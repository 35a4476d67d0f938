import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ProcessConfig } from '../shared/config.ts';
import { lockDataDir } from '../shared/data-dir-lock.ts';
import { messageOf } from '../shared/errors.ts';
import { type OpenedStore, openStore, sqliteLogFile } from '../shared/event-store/open.ts';
import { redactUrl } from '../shared/event-store/redact.ts';

/**
 * Opens the configured log for a command that works on it directly, runs `work`, and closes it.
 * The embedded store is locked first (the gateway must be stopped). A command that reads a log
 * never makes one: where there is none (no `log.sqlite` in the data dir, no Studio tables in the
 * database), or on the memory store, it says so and exits with code 2, `what` in the message.
 */
export async function withLog(
  config: ProcessConfig,
  what: string,
  work: (store: OpenedStore) => Promise<void>,
): Promise<void> {
  const missing = await missingLog(config);
  if (missing !== undefined) {
    console.error(`studio: ${missing}; there is nothing to ${what}`);
    process.exitCode = 2;
    return;
  }
  const lock = config.eventStore === 'sqlite' ? await lockDataDir(config.dataDir) : undefined;
  try {
    const store = await openStore({
      kind: config.eventStore,
      dataDir: config.dataDir,
      synchronous: config.sqliteSynchronous,
      databaseUrl: config.databaseUrl,
    });
    try {
      await work(store);
    } finally {
      await store.close();
    }
  } finally {
    await lock?.release();
  }
}

/** Why the configured store holds no log, or undefined when it holds one (KurrentDB: always). */
async function missingLog(config: ProcessConfig): Promise<string | undefined> {
  switch (config.eventStore) {
    case 'memory':
      return 'the memory store keeps nothing between processes';
    case 'sqlite': {
      const file = sqliteLogFile(resolve(config.dataDir));
      return existsSync(file)
        ? undefined
        : `no log at ${file} (set STUDIO_DATA_DIR to the data dir a gateway wrote)`;
    }
    case 'postgres': {
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: config.databaseUrl, connectionTimeoutMillis: 5_000 });
      client.on('error', () => undefined);
      const where = redactUrl(config.databaseUrl ?? '');
      try {
        await client.connect();
        const found = await client.query<{ events: string | null }>("SELECT to_regclass('events') AS events");
        return found.rows[0]?.events ? undefined : `no Studio log in the database at ${where}`;
      } catch (error) {
        return `cannot reach the database at ${where}: ${messageOf(error)}`;
      } finally {
        await client.end().catch(() => undefined);
      }
    }
    default:
      return undefined;
  }
}
