import { join } from 'node:path';
import { fileKeyVault } from './file.ts';
import { memoryKeyVault } from './memory.ts';
import { postgresKeyVault } from './postgres.ts';
import type { KeyVault } from './types.ts';

/** Beside the log: in PostgreSQL when the gateway keeps its state there, files of the data dir for SQLite, else memory. */
export function openKeyVault(options: {
  eventStore: string;
  dataDir: string;
  databaseUrl?: string;
}): Promise<KeyVault> {
  if ((options.eventStore === 'postgres' || options.eventStore === 'kurrentdb') && options.databaseUrl)
    return postgresKeyVault(options.databaseUrl);
  if (options.eventStore === 'sqlite') return fileKeyVault(join(options.dataDir, 'keys'));
  return Promise.resolve(memoryKeyVault());
}
