import { readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { syncPath, syncTree } from './fsync.ts';
import { readOrCreateKeyFile } from './key-files.ts';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'studio-fsync-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(root, { recursive: true, force: true });
});

/** Paths, relative to `root`, of every file handle synced from now on. */
async function spyOnSyncs(): Promise<string[]> {
  const probe = await open(root, 'r');
  const prototype = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
  await probe.close();
  const synced: string[] = [];
  const sync = prototype.sync;
  vi.spyOn(prototype, 'sync').mockImplementation(function (this: { fd: number }) {
    synced.push(relative(root, readlinkSync(`/proc/self/fd/${this.fd}`)) || '.');
    return sync.call(this);
  });
  return synced;
}

describe('syncPath', () => {
  it('syncs a file and a folder', async () => {
    await writeFile(join(root, 'a'), 'x');
    const synced = await spyOnSyncs();
    await syncPath(join(root, 'a'));
    await syncPath(root);
    expect(synced).toEqual(['a', '.']);
  });

  it('a path that is not there is an error', async () => {
    await expect(syncPath(join(root, 'missing'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('syncTree', () => {
  it('syncs every file and folder under a directory, each folder after what it holds', async () => {
    await mkdir(join(root, 'base', '5'), { recursive: true });
    await writeFile(join(root, 'PG_VERSION'), '18\n');
    await writeFile(join(root, 'base', '5', '1259'), 'x');
    await writeFile(join(root, 'base', '5', '1249'), 'y');
    const synced = await spyOnSyncs();
    await syncTree(root);
    expect([...synced].sort()).toEqual(['.', 'PG_VERSION', 'base', 'base/5', 'base/5/1249', 'base/5/1259']);
    const at = (path: string) => synced.indexOf(path);
    expect(at('base/5')).toBeGreaterThan(Math.max(at('base/5/1249'), at('base/5/1259')));
    expect(at('base')).toBeGreaterThan(at('base/5'));
    expect(at('.')).toBe(synced.length - 1);
  });
});

describe('key files', () => {
  it('a key file made now is on disk, with its name, before it is handed out', async () => {
    const synced = await spyOnSyncs();
    const file = await readOrCreateKeyFile(root, 'master.key');
    expect(file.created).toBe(true);
    expect(synced).toEqual(['master.key', '.']);
    synced.length = 0;
    expect((await readOrCreateKeyFile(root, 'master.key')).created).toBe(false);
    expect(synced).toEqual([]);
  });
});
