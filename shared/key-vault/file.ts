import { mkdir, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkKeyId, type KeyVault } from './types.ts';

/**
 * Keys as files of `dir` (the embedded store's data dir), one per key, written and synced before a
 * put returns. Destroying a key unlinks its file: the file system may keep the old blocks until they
 * are reused, which an erasure on an encrypted disk does not have to care about (docs/security.md).
 */
export async function fileKeyVault(dir: string): Promise<KeyVault> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = (id: string) => join(dir, checkKeyId(id));
  const read = (id: string) => readFile(path(id), 'utf8').catch(() => undefined);
  return {
    kind: 'file',
    async putIfAbsent(id, value) {
      try {
        // `wx`: fails when the file exists, so two puts of one id keep the first.
        const file = await open(path(id), 'wx', 0o600);
        try {
          await file.writeFile(value);
          await file.sync();
        } finally {
          await file.close();
        }
        const directory = await open(dir, 'r');
        await directory.sync().finally(() => directory.close());
        return value;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        return (await read(id)) ?? value;
      }
    },
    get: read,
    list: async (prefix) => (await readdir(dir)).filter((name) => name.startsWith(prefix)),
    async destroy(ids) {
      let destroyed = 0;
      for (const id of ids) {
        if ((await read(id)) === undefined) continue;
        // Overwritten before it is unlinked, so a copy of the file's blocks holds nothing.
        await writeFile(path(id), '0'.repeat(64));
        await rm(path(id), { force: true });
        destroyed++;
      }
      return destroyed;
    },
    close: async () => undefined,
  };
}
