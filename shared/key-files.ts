import { randomBytes } from 'node:crypto';
import { chmod, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileDurably } from './fsync.ts';
import { ensurePrivateDir } from './private-dir.ts';

export class EmptyKeyFile extends Error {
  override readonly name = 'EmptyKeyFile';
}

/**
 * Reads a secret kept in the data dir, or generates it once with mode 0600. Used for the admin key
 * and the master key when their env variables are unset.
 */
export async function readOrCreateKeyFile(
  dataDir: string,
  fileName: string,
  generate: () => string = () => randomBytes(32).toString('base64url'),
): Promise<{ value: string; path: string; created: boolean }> {
  const path = join(dataDir, fileName);
  await ensurePrivateDir(dataDir);
  try {
    const value = (await readFile(path, 'utf8')).trim();
    const mode = (await stat(path)).mode & 0o777;
    if (mode & 0o077) await chmod(path, 0o600);
    if (!value) {
      // Never replace it: a new master key could not open the secrets encrypted with the old one.
      throw new EmptyKeyFile(
        `${path} is empty: put the key back, or remove the file to have a new one generated`,
      );
    }
    return { value, path, created: false };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const value = generate();
  // `wx`: if another process created it in between, fail instead of overwriting its key. On disk
  // before anything is encrypted with it: events are, and a key lost to a power cut (an empty file, or
  // none) would leave them unreadable.
  try {
    await writeFileDurably(path, `${value}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      return readOrCreateKeyFile(dataDir, fileName, generate);
    throw error;
  }
  return { value, path, created: true };
}

export const generateHexKey = (): string => randomBytes(32).toString('hex');
