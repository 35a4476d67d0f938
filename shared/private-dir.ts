import { chmod, mkdir, stat } from 'node:fs/promises';

/**
 * Makes `dir` (keys, the embedded log, job outputs) reachable by its owner only: created 0700, and
 * an existing one that is open to others is closed to 0700 at start.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (process.platform === 'win32') return;
  const { mode } = await stat(dir);
  if (mode & 0o077) await chmod(dir, 0o700);
}
