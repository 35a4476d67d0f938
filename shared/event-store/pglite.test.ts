import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { openPgliteStore, PGLITE_SETTINGS } from './pglite.ts';
import { buildPgliteTemplate, initializePgliteDir } from './pglite-initdb.ts';

const MB = 1024 * 1024;
const ROOT = join(import.meta.dirname, '..', '..');
const INITDB_WITHOUT_TEMPLATE = `
const { initializePgliteDir } = await import('./shared/event-store/pglite-initdb.ts');
const { PGLITE_SETTINGS } = await import('./shared/event-store/pglite.ts');
await initializePgliteDir(process.argv[1], PGLITE_SETTINGS, process.argv[2]);
`;
const OPEN_AND_REPORT_RSS = `
const { openPgliteStore } = await import('./shared/event-store/pglite.ts');
const { store } = await openPgliteStore(process.argv[1]);
await store.append('s-1', [{ type: 'Noted', data: { n: 1 } }], { metadata: { actor: 'test' } });
process.stdout.write(String(process.memoryUsage().rss));
await store.close();
`;

describe('embedded PGlite store', () => {
  it('runs with small shared buffers, so the WASM heap stays small', async () => {
    const { store, driver } = await openPgliteStore(undefined);
    try {
      const { rows } = await driver.query<{ shared_buffers: string }>('show shared_buffers');
      expect(rows[0]?.shared_buffers).toBe('16MB');
    } finally {
      await store.close();
    }
  });

  it('creates a fresh directory without growing this process heap (copied, or initdb out of process), and the data stays', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'studio-pglite-'));
    const dir = join(parent, 'pglite');
    try {
      // In a process of its own, so that its resident memory is PGlite's and nothing else's:
      // initdb in-process leaves ~750 MB resident, a directory created out of process ~200 MB.
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', OPEN_AND_REPORT_RSS, dir],
        { cwd: ROOT },
      );
      expect(Number(stdout) / MB).toBeLessThan(400);
      expect(existsSync(join(dir, 'PG_VERSION'))).toBe(true);

      const again = await openPgliteStore(dir);
      const events = await again.store.readStream('s-1');
      expect(events.map((e) => e.data)).toEqual([{ n: 1 }]);
      await again.store.close();
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });

  it('copies a new directory from the template made at install, unless another PGlite made it', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'studio-pglite-'));
    const template = join(parent, 'template');
    // initdb gives every cluster its own system identifier, in global/pg_control: a copy keeps it.
    const controlOf = (dir: string) => readFile(join(dir, 'global', 'pg_control'));
    // A folder per database under base/: initdb makes template1, template0 and postgres.
    const databasesIn = (dir: string) => readdir(join(dir, 'base'));
    try {
      await buildPgliteTemplate(PGLITE_SETTINGS, template);
      // initdb's templates are dropped as the directory is made, not at a first start.
      expect(await databasesIn(template)).toHaveLength(1);
      const copied = join(parent, 'copied', 'pglite');
      await initializePgliteDir(copied, PGLITE_SETTINGS, template);
      expect((await controlOf(copied)).equals(await controlOf(template))).toBe(true);
      expect(existsSync(join(copied, 'studio-template.json'))).toBe(false);
      const { store } = await openPgliteStore(copied);
      await store.append('s-1', [{ type: 'Noted', data: { n: 1 } }], { metadata: { actor: 'test' } });
      expect((await store.readStream('s-1')).map((e) => e.data)).toEqual([{ n: 1 }]);
      await store.close();

      await writeFile(join(template, 'studio-template.json'), JSON.stringify({ pglite: '0.0.1' }));
      const made = join(parent, 'made');
      await initializePgliteDir(made, PGLITE_SETTINGS, template);
      expect(existsSync(join(made, 'PG_VERSION'))).toBe(true);
      expect((await controlOf(made)).equals(await controlOf(template))).toBe(false);
      expect(await databasesIn(made)).toHaveLength(1);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });

  it('a first start killed while initdb runs leaves no half-made directory; the next start makes it', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'studio-pglite-'));
    const dir = join(parent, 'pglite');
    try {
      // Its own process group, killed as a whole (as a service manager or a power cut would): initdb's
      // child too. No template, so initdb runs (some 3 s), and is killed once it has written files.
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', INITDB_WITHOUT_TEMPLATE, dir, join(parent, 'none')],
        { cwd: ROOT, detached: true, stdio: 'ignore' },
      );
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const staged = () =>
        readdir(parent).then((names) => names.find((name) => name.startsWith('pglite.new-')));
      // Until initdb has written files, wherever it writes them.
      const writing = () =>
        readdir(parent).then((names) => names.some((name) => existsSync(join(parent, name, 'base'))));
      for (let waited = 0; !(await writing()); waited += 20) {
        if (waited > 60_000) throw new Error('initdb never started writing');
        await sleep(20);
      }
      process.kill(-child.pid!, 'SIGKILL');
      await exited;
      expect(existsSync(dir)).toBe(false);

      await initializePgliteDir(dir, PGLITE_SETTINGS);
      expect(await staged()).toBeUndefined();
      const { store } = await openPgliteStore(dir);
      await store.append('s-1', [{ type: 'Noted', data: { n: 1 } }], { metadata: { actor: 'test' } });
      expect((await store.readStream('s-1')).map((e) => e.data)).toEqual([{ n: 1 }]);
      await store.close();
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  }, 90_000);

  it('a directory holding files but no database is refused, and left as it was', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'studio-pglite-'));
    const dir = join(parent, 'pglite');
    try {
      await mkdir(dir);
      await writeFile(join(dir, 'notes.txt'), 'mine');
      await expect(initializePgliteDir(dir, PGLITE_SETTINGS)).rejects.toThrow(
        /could not create the PGlite data directory .*pglite: it exists and holds files but no database/,
      );
      expect(await readdir(dir)).toEqual(['notes.txt']);
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });

  it('a directory that cannot be created is a clear error naming it', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'studio-pglite-'));
    try {
      // A file where the directory should be.
      const file = join(parent, 'taken');
      await writeFile(file, 'x');
      await expect(openPgliteStore(join(file, 'pglite'))).rejects.toThrow(
        /could not create the PGlite data directory .*taken/,
      );
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });
});
