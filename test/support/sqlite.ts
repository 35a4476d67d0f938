import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteLog, type SqliteLog } from '../../shared/event-store/sqlite/open.ts';
import type { StoreTestHooks } from '../../shared/event-store/types.ts';

/** An embedded log in a temp dir of its own, removed on close; `file` is its path. */
export async function tempSqliteLog(hooks?: StoreTestHooks): Promise<SqliteLog & { file: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'studio-sqlite-'));
  const file = join(dir, 'log.sqlite');
  const log = openSqliteLog(file, { hooks });
  return {
    ...log,
    file,
    close: async () => {
      await log.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
