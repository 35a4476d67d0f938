import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PGLITE_SETTINGS } from './pglite.ts';
import { initializePgliteDir } from './pglite-initdb.ts';
import { startPgliteThread } from './pglite-thread.ts';
import { type SqlDriver, sqlState, UNIQUE_VIOLATION } from './sql-driver.ts';
import { EventLogStopped } from './types.ts';

const ROOT = join(import.meta.dirname, '..', '..');

describe('PGlite in a worker thread', () => {
  let db: SqlDriver;
  beforeAll(async () => {
    db = await startPgliteThread(undefined, PGLITE_SETTINGS);
    await db.exec('CREATE TABLE notes (id integer PRIMARY KEY, body text NOT NULL)');
  });
  afterAll(() => db.close());

  const bodies = async () =>
    (await db.query<{ body: string }>('SELECT body FROM notes ORDER BY id')).rows.map((r) => r.body);

  it('answers queries with their parameters, and errors keep their SQLSTATE', async () => {
    await db.query('INSERT INTO notes (id, body) VALUES ($1, $2)', [1, 'first']);
    expect(await bodies()).toEqual(['first']);
    const failure = await db.query('INSERT INTO notes (id, body) VALUES (1, $1)', ['again']).catch((e) => e);
    expect(failure).toBeInstanceOf(Error);
    expect(sqlState(failure)).toBe(UNIQUE_VIOLATION);
    expect(String(failure.message)).toMatch(/duplicate key/);
  });

  it('commits a transaction whose work resolves and rolls back one whose work throws', async () => {
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO notes (id, body) VALUES (2, $1)', ['committed']);
    });
    const refused = db.transaction(async (tx) => {
      await tx.query('INSERT INTO notes (id, body) VALUES (3, $1)', ['rolled back']);
      throw new Error('changed my mind');
    });
    await expect(refused).rejects.toThrow('changed my mind');
    expect(await bodies()).toEqual(['first', 'committed']);
  });

  it('runs a query asked outside a transaction after the transaction, not inside it', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const open = db.transaction(async (tx) => {
      await tx.query('INSERT INTO notes (id, body) VALUES (4, $1)', ['in a transaction']);
      await held;
      throw new Error('rolled back');
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const outside = bodies();
    release();
    await expect(open).rejects.toThrow('rolled back');
    expect(await outside).toEqual(['first', 'committed']);
  });

  it('fails a call whose parameters cannot be sent to the thread, and goes on serving', async () => {
    await expect(db.query('SELECT $1::text AS t', [() => 'not data'])).rejects.toThrow(
      /cannot send to the PGlite thread/,
    );
    const { rows } = await db.query<{ t: string }>('SELECT $1::text AS t', ['still here']);
    expect(rows).toEqual([{ t: 'still here' }]);
  });

  it('does not keep a process alive while nothing is asked of it', async () => {
    const script = `
      const { startPgliteThread } = await import('./shared/event-store/pglite-thread.ts');
      const db = await startPgliteThread(undefined, []);
      const { rows } = await db.query('SELECT 41 + 1 AS answer');
      process.stdout.write(String(rows[0].answer));
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: ROOT, timeout: 30_000 },
    );
    expect(stdout).toBe('42');
  });

  it('ends the thread on a PANIC: later calls refused at once with the reason, and a new start recovers', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'studio-pglite-panic-'));
    const dir = join(parent, 'pglite');
    try {
      await initializePgliteDir(dir, PGLITE_SETTINGS);
      const db = await startPgliteThread(dir, PGLITE_SETTINGS);
      await db.exec('CREATE TABLE kept (n integer)');
      await db.query('INSERT INTO kept VALUES (1)');
      // A directory where PostgreSQL makes its next WAL file: writing past the one it is on fails, in
      // a critical section, so PostgreSQL PANICs, as it does on a disk that is full.
      const blocker = join(dir, 'pg_wal', 'xlogtemp.42');
      await mkdir(blocker);
      await db.query('SELECT pg_switch_wal()');
      const reason = /the embedded database stopped \(PANIC: could not create file pg_wal\/xlogtemp\.42/;
      const panic = await db.query('INSERT INTO kept VALUES (2)').catch((error: unknown) => error);
      expect(panic).toBeInstanceOf(EventLogStopped);
      expect((panic as Error).message).toMatch(reason);

      // Before the thread ended on a PANIC, PGlite's next query never returned.
      await expect(db.query('SELECT 1')).rejects.toThrow(reason);
      expect((await db.lost)?.message).toMatch(reason);
      await db.close();

      // Recovery needs that file too: the start fails, saying why in PostgreSQL's words.
      await expect(startPgliteThread(dir, PGLITE_SETTINGS)).rejects.toThrow(/FATAL: .*xlogtemp\.42/);
      await rm(blocker, { recursive: true });
      const again = await startPgliteThread(dir, PGLITE_SETTINGS);
      expect((await again.query<{ n: number }>('SELECT n FROM kept')).rows).toEqual([{ n: 1 }]);
      await again.close();
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  }, 60_000);

  it('ends the thread on a PANIC inside a transaction, whose commit PGlite would never return', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'studio-pglite-panic-tx-'));
    const dir = join(parent, 'pglite');
    try {
      await initializePgliteDir(dir, PGLITE_SETTINGS);
      const db = await startPgliteThread(dir, PGLITE_SETTINGS);
      await db.exec('CREATE TABLE kept (n integer)');
      await mkdir(join(dir, 'pg_wal', 'xlogtemp.42'));
      const reason = /the embedded database stopped \(PANIC: could not create file pg_wal\/xlogtemp\.42/;
      const ended = await db
        .transaction(async (tx) => {
          await tx.query('INSERT INTO kept VALUES (1)');
          await tx.query('SELECT pg_switch_wal()');
          await tx.query('INSERT INTO kept VALUES (2)');
        })
        .catch((error: unknown) => error);
      expect(ended).toBeInstanceOf(EventLogStopped);
      expect((ended as Error).message).toMatch(reason);
      expect((await db.lost)?.message).toMatch(reason);
      await db.close();
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses calls once closed, with an error saying why', async () => {
    const closed = await startPgliteThread(undefined, PGLITE_SETTINGS);
    await closed.close();
    await expect(closed.query('SELECT 1')).rejects.toThrow(/PGlite thread exited/);
  });
});
