import { fdatasyncSync, fsyncSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPgliteStore, PGLITE_SETTINGS } from './pglite.ts';
import { initializePgliteDir } from './pglite-initdb.ts';
import { SyncedNodeFS } from './pglite-synced-fs.mjs';

describe('PGlite on disk syncs what it commits', () => {
  let parent: string;
  let dir: string;
  let db: PGlite;
  /** Paths (inside the data directory, folders ending in `/`) of every fsync PostgreSQL asked for, in order. */
  const synced: string[] = [];

  beforeAll(async () => {
    parent = await mkdtemp(join(tmpdir(), 'studio-pglite-sync-'));
    dir = join(parent, 'pglite');
    await initializePgliteDir(dir, PGLITE_SETTINGS);
    const spy = (fd: number, isFolder: boolean) => {
      const path = relative(dir, readlinkSync(`/proc/self/fd/${fd}`));
      synced.push(isFolder ? `${path}/` : path);
      (isFolder ? fsyncSync : fdatasyncSync)(fd);
    };
    db = new PGlite({
      fs: new SyncedNodeFS(dir, spy),
      startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS],
    });
    await db.query('CREATE TABLE noted (n integer)');
  });

  afterAll(async () => {
    await db?.close();
    await rm(parent, { recursive: true, force: true });
  });

  it('runs with fsync on, through the WAL sync method the file system implements', async () => {
    const { rows } = await db.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'wal_sync_method') ORDER BY name",
    );
    expect(rows).toEqual([
      { name: 'fsync', setting: 'on' },
      { name: 'wal_sync_method', setting: 'fsync' },
    ]);
  });

  it('every commit puts the WAL on disk before it returns', async () => {
    for (let n = 1; n <= 3; n++) {
      const before = synced.length;
      await db.query('INSERT INTO noted VALUES ($1)', [n]);
      // One WAL file, or two when the commit fills a segment and starts the next.
      const walFiles = synced
        .slice(before)
        .filter((path) => path.startsWith('pg_wal/') && !path.endsWith('/'));
      expect(walFiles.length).toBeGreaterThanOrEqual(1);
    }
  });

  it('a checkpoint puts the data files, the control file and folders on disk', async () => {
    const before = synced.length;
    await db.query('CHECKPOINT');
    const paths = synced.slice(before);
    expect(paths.some((path) => path.startsWith('base/'))).toBe(true);
    expect(paths).toContain('global/pg_control');
    expect(paths).toContain('pg_xact/');
  });

  it('the store opened on a directory has the same settings', async () => {
    const { store, driver } = await openPgliteStore(join(parent, 'store'));
    try {
      const { rows } = await driver.query<{ fsync: string }>('SHOW fsync');
      expect(rows[0]?.fsync).toBe('on');
    } finally {
      await store.close();
    }
  });
});
