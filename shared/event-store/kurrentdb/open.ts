import { KurrentDBClient } from '@kurrent/kurrentdb-client';
import { redactConnectionString } from '../redact.ts';
import type { StoreTestHooks } from '../types.ts';
import { KurrentDbEventStore } from './store.ts';

export interface OpenKurrentDbOptions {
  /** A KurrentDB connection string, e.g. `kurrentdb://localhost:2113?tls=false`. */
  connectionString: string;
  streamPrefix?: string;
  hooks?: StoreTestHooks;
  confirmTimeoutMs?: number;
}

/** Connects, opens the live subscription and returns the store (closing the client on failure). */
export async function openKurrentDbStore(options: OpenKurrentDbOptions): Promise<KurrentDbEventStore> {
  if (options.hooks?.beforeCommit) {
    throw new Error('the kurrentdb store commits on the server and cannot honour the beforeCommit test hook');
  }
  const client = KurrentDBClient.connectionString(options.connectionString);
  const store = new KurrentDbEventStore({
    client,
    streamPrefix: options.streamPrefix,
    confirmTimeoutMs: options.confirmTimeoutMs,
  });
  try {
    await store.start();
  } catch (error) {
    await store.close();
    throw new Error(`cannot open KurrentDB at ${redactConnectionString(options.connectionString)}`, {
      cause: error,
    });
  }
  return store;
}
