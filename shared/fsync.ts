import { type FileHandle, open, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Puts a file, or a folder's entries (names created or renamed in it), on disk: what was written is
 * otherwise in the operating system's cache, which a power cut or a kernel crash loses.
 */
export async function syncPath(path: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, 'r');
    await handle.sync();
  } catch (error) {
    // Windows opens no handle on a folder to sync; its file system keeps names in its journal.
    if (!(process.platform === 'win32' && (error as NodeJS.ErrnoException).code === 'EISDIR')) throw error;
  } finally {
    await handle?.close();
  }
}

/**
 * `writeFile`, then the file and its folder's entry synced: for a file that an event, or a secret
 * encrypted with it, will rely on once stored (events reach the disk before they are acknowledged).
 */
export async function writeFileDurably(
  path: string,
  data: string | Uint8Array,
  options?: Parameters<typeof writeFile>[2],
): Promise<void> {
  await writeFile(path, data, options);
  await syncPath(path);
  await syncPath(dirname(path));
}
