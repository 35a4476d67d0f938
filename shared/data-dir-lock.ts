import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export class DataDirInUse extends Error {
  override readonly name = 'DataDirInUse';
}

/**
 * One process at a time may open an embedded (PGlite) data directory: a second one would corrupt it.
 * The lock is a file holding the owner's pid; a lock left by a dead process is taken over.
 */
export async function lockDataDir(dataDir: string): Promise<{ release(): Promise<void> }> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, 'studio.lock');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      await writeFile(path, String(process.pid), { flag: 'wx' });
      return { release: () => rm(path, { force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    if (owner && owner !== process.pid && isAlive(owner)) {
      throw new DataDirInUse(
        `${dataDir} is in use by process ${owner}; stop it first (only one process may open an embedded store)`,
      );
    }
    await rm(path, { force: true });
  }
  throw new DataDirInUse(`could not lock ${dataDir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
