import { chmod, mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { syncPath } from './fsync.ts';

/**
 * Makes `dir` (keys, the embedded log, job outputs) reachable by its owner only: created 0700, and
 * an existing one that is open to others is closed to 0700 at start.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  const made = await mkdir(dir, { recursive: true, mode: 0o700 });
  // A folder made now is named on disk before keys and the log go in it.
  if (made !== undefined) await syncPath(dirname(made));
  if (process.platform === 'win32') return;
  const { mode } = await stat(dir);
  if (mode & 0o077) await chmod(dir, 0o700);
}
