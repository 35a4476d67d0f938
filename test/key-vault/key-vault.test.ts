import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileKeyVault } from '../../shared/key-vault/file.ts';
import { memoryKeyVault } from '../../shared/key-vault/memory.ts';
import { postgresKeyVault } from '../../shared/key-vault/postgres.ts';
import type { KeyVault } from '../../shared/key-vault/types.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';

// One contract for every key vault: keys kept beside the log, destroyed for good on demand.

const database = await freshPostgresDatabase();
const dir = await mkdtemp(join(tmpdir(), 'studio-keys-'));
afterAll(async () => {
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

const VAULTS: { name: string; open: () => Promise<KeyVault>; skip?: string | undefined }[] = [
  { name: 'memory', open: async () => memoryKeyVault() },
  { name: 'file', open: () => fileKeyVault(join(dir, `v${Math.random()}`)) },
  {
    name: 'postgres',
    open: () => postgresKeyVault(database!.url),
    skip: database ? undefined : postgresUnavailableReason,
  },
];

describe.each(VAULTS)('the $name key vault', ({ open, skip }) => {
  it.skipIf(skip !== undefined)(
    'keeps the first value put under an id, lists by prefix, destroys for good',
    async () => {
      const vault = await open();
      const prefix = `s${Math.random().toString(36).slice(2)}:`;
      try {
        expect(await vault.putIfAbsent(`${prefix}2026-11-28`, 'first')).toBe('first');
        expect(await vault.putIfAbsent(`${prefix}2026-11-28`, 'second')).toBe('first');
        await vault.putIfAbsent(`${prefix}2026-11-29`, 'other');
        await vault.putIfAbsent('unrelated:1', 'x');
        expect((await vault.list(prefix)).sort()).toEqual([`${prefix}2026-11-28`, `${prefix}2026-11-29`]);
        expect(await vault.get(`${prefix}2026-11-28`)).toBe('first');
        expect(await vault.destroy([`${prefix}2026-11-28`, `${prefix}never`])).toBe(1);
        expect(await vault.get(`${prefix}2026-11-28`)).toBeUndefined();
        expect(await vault.list(prefix)).toEqual([`${prefix}2026-11-29`]);
        await expect(vault.putIfAbsent('../escape', 'x')).rejects.toThrow('not a key id');
      } finally {
        await vault.close();
      }
    },
  );
});

describe('the file key vault', () => {
  it('a destroyed key leaves no file behind, and a key put survives a reopen', async () => {
    const path = join(dir, 'reopen');
    const vault = await fileKeyVault(path);
    await vault.putIfAbsent('a:1', 'kept');
    await vault.putIfAbsent('a:2', 'gone');
    await vault.destroy(['a:2']);
    expect(await readdir(path)).toEqual(['a:1']);
    expect(await (await fileKeyVault(path)).get('a:1')).toBe('kept');
  });
});

describe('the postgres key vault', () => {
  it.skipIf(database === undefined)(
    'opens when several gateways create its table at the same moment',
    async () => {
      const fresh = await freshPostgresDatabase();
      try {
        for (let round = 0; round < 40; round++) {
          const { default: pg } = await import('pg');
          const admin = new pg.Client({ connectionString: fresh!.url });
          await admin.connect();
          await admin.query('DROP TABLE IF EXISTS studio_key_vault');
          await admin.end();
          const vaults = await Promise.all(Array.from({ length: 8 }, () => postgresKeyVault(fresh!.url)));
          await vaults[0]!.putIfAbsent('race:1', 'kept');
          for (const vault of vaults) expect(await vault.get('race:1')).toBe('kept');
          await Promise.all(vaults.map((vault) => vault.close()));
        }
      } finally {
        await fresh?.drop();
      }
    },
  );
});
