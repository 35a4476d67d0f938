import type { StudioConfig } from '../shared/config.ts';
import { lockDataDir } from '../shared/data-dir-lock.ts';
import { type OpenedStore, openStore } from '../shared/event-store/open.ts';

/**
 * Opens the configured log for a command that works on it directly, runs `work`, and closes it.
 * The embedded store is locked first (the gateway must be stopped); the memory store has nothing to work on:
 * exit code 2, with `what` in the message.
 */
export async function withLog(
  config: StudioConfig,
  what: string,
  work: (store: OpenedStore) => Promise<void>,
): Promise<void> {
  if (config.eventStore === 'memory') {
    console.error(`studio: the memory store keeps nothing between processes; there is nothing to ${what}`);
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
