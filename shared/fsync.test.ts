import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { syncPath, writeFileDurably } from './fsync.ts';
import { recordFileSyncs } from './fsync-testing.ts';

let root: string;
let recording: { synced: string[]; stop: () => void } | undefined;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'studio-fsync-'));
});
afterEach(async () => {
  recording?.stop();
  await rm(root, { recursive: true, force: true });
});

const spyOnSyncs = async () => {
  recording = await recordFileSyncs(root);
  return recording.synced;
};

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

describe('writeFileDurably', () => {
  it('writes the file, then syncs it and its folder', async () => {
    await mkdir(join(root, 'media'));
    const synced = await spyOnSyncs();
    await writeFileDurably(join(root, 'media', 'v.mp4'), Buffer.from('video'));
    expect(synced).toEqual(['media/v.mp4', 'media']);
  });
});
