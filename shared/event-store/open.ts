import { join } from 'node:path';
import {
  type CheckpointStore,
  MemoryCheckpointStore,
  SqlCheckpointStore,
} from '../../projections/checkpoints.ts';
import { MemoryEventStore } from './memory.ts';
import { openPgliteStore } from './pglite.ts';
import { openPostgresStore } from './postgres.ts';
import type { EventStore, EventStoreKind, StoreTestHooks } from './types.ts';

export interface StoreConfig {
  kind: EventStoreKind;
  dataDir: string;
  databaseUrl?: string;
  hooks?: StoreTestHooks;
}

export interface OpenedStore {
  events: EventStore;
  checkpoints: CheckpointStore;
  /** Where the log lives, for people: a directory, a database URL without password, or "memory". */
  location: string;
  close(): Promise<void>;
}

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
    case 'pglite': {
      const dir = join(config.dataDir, 'pglite');
      const { store, driver } = await openPgliteStore(dir, config.hooks);
      return {
        events: store,
        checkpoints: new SqlCheckpointStore(driver),
        location: dir,
        close: () => store.close(),
      };
    }
    case 'postgres': {
      if (!config.databaseUrl) throw new Error('STUDIO_EVENT_STORE=postgres needs DATABASE_URL');
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
    case 'kurrentdb':
      throw new Error('STUDIO_EVENT_STORE=kurrentdb is not available yet in this version');
    default: {
      const unknown: never = config.kind;
      throw new Error(`unknown event store ${String(unknown)}`);
    }
  }
}

export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres';
  }
}
