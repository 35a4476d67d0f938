import { chmod, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recordFileSyncs } from './fsync-testing.ts';
import { EmptyKeyFile, readOrCreateKeyFile } from './key-files.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'studio-keys-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Fails the test instead of hanging when the call never settles. */
const within = <T>(promise: Promise<T>, ms = 2_000) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)),
  ]);

describe('key files', () => {
  it('a key file made now is on disk, with its name, before it is handed out', async () => {
    const recording = await recordFileSyncs(dir);
    try {
      const file = await readOrCreateKeyFile(dir, 'master.key');
      expect(file.created).toBe(true);
      expect(recording.synced).toEqual(['master.key', '.']);
      recording.synced.length = 0;
      expect((await readOrCreateKeyFile(dir, 'master.key')).created).toBe(false);
      expect(recording.synced).toEqual([]);
    } finally {
      recording.stop();
    }
  });

  it('a data directory made now is named on disk before its key file is made in it', async () => {
    const recording = await recordFileSyncs(dir);
    try {
      await readOrCreateKeyFile(join(dir, 'data'), 'admin.key');
      expect(recording.synced).toEqual(['.', 'data/admin.key', 'data']);
    } finally {
      recording.stop();
    }
  });

  it.each(['admin.key', 'master.key'])(
    'an empty %s is refused with a message naming it, never replaced',
    async (name) => {
      await writeFile(join(dir, name), '\n', { mode: 0o600 });
      const error = await within(readOrCreateKeyFile(dir, name)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EmptyKeyFile);
      expect((error as Error).message).toContain(join(dir, name));
    },
  );

  it('an existing data directory open to others is closed to 0700, its key file to 0600', async () => {
    await chmod(dir, 0o755);
    await writeFile(join(dir, 'admin.key'), 'k'.repeat(40), { mode: 0o644 });
    const file = await readOrCreateKeyFile(dir, 'admin.key');
    expect(file.created).toBe(false);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, 'admin.key'))).mode & 0o777).toBe(0o600);
  });

  it('a missing key is generated once, 0600', async () => {
    const first = await readOrCreateKeyFile(join(dir, 'new'), 'master.key');
    const again = await readOrCreateKeyFile(join(dir, 'new'), 'master.key');
    expect(first.created).toBe(true);
    expect(again).toMatchObject({ value: first.value, created: false });
    expect((await stat(join(dir, 'new'))).mode & 0o777).toBe(0o700);
  });
});
