import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PGLITE_SETTINGS } from './pglite.ts';
import { initializePgliteDir } from './pglite-initdb.ts';
import { type MaintenancePolicy, PGLITE_MAINTENANCE, startPgliteThread } from './pglite-thread.ts';
import { type SqlDriver, sqlState, UNIQUE_VIOLATION } from './sql-driver.ts';
import { EventLogStopped } from './types.ts';

const ROOT = join(import.meta.dirname, '..', '..');

/** Runs `work` on a new, initialized PGlite data directory, removed afterwards. */
async function inNewDataDir(work: (dir: string) => Promise<void>): Promise<void> {
  const parent = await mkdtemp(join(tmpdir(), 'studio-pglite-thread-'));
  try {
    const dir = join(parent, 'pglite');
    await initializePgliteDir(dir, PGLITE_SETTINGS);
    await work(dir);
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
}

/**
 * Puts a folder where PostgreSQL makes its next WAL file: writing past the one it is on then fails in
 * a critical section, so PostgreSQL PANICs, as it does on a disk that is full. Returns the folder.
 */
async function blockNextWalFile(dir: string): Promise<string> {
  const blocker = join(dir, 'pg_wal', 'xlogtemp.42');
  await mkdir(blocker);
  return blocker;
}

/** How a call is refused once that PANIC ended the thread. */
const WAL_FILE_PANIC = /the embedded database stopped \(PANIC: could not create file pg_wal\/xlogtemp\.42/;

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

  it('prepares each query asked outside a transaction once, and a transaction’s queries not at all', async () => {
    const prepared = async () =>
      (await db.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements')).rows.map(
        (r) => r.statement,
      );
    for (let i = 0; i < 3; i++) await db.query('SELECT count(*) AS n FROM notes WHERE id > $1', [i]);
    await db.transaction((tx) => tx.query('SELECT body FROM notes WHERE id = $1', [1]));
    const statements = await prepared();
    expect(statements.filter((s) => s === 'SELECT count(*) AS n FROM notes WHERE id > $1')).toHaveLength(1);
    expect(statements).not.toContain('SELECT body FROM notes WHERE id = $1');
  });

  it('plans a prepared query at each run with its values, never with a generic plan', async () => {
    const sql = 'SELECT body FROM notes WHERE id > $1 ORDER BY id LIMIT $2';
    for (let i = 0; i < 12; i++) await db.query(sql, [i, 1]);
    const { rows } = await db.query<{ generic: number; custom: number }>(
      'SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE statement = $1',
      [sql],
    );
    expect(rows).toEqual([{ generic: 0, custom: 12 }]);
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

  it(
    'ends the thread on a PANIC: later calls refused at once with the reason, and a new start recovers',
    () =>
      inNewDataDir(async (dir) => {
        const db = await startPgliteThread(dir, PGLITE_SETTINGS);
        await db.exec('CREATE TABLE kept (n integer)');
        await db.query('INSERT INTO kept VALUES (1)');
        const blocker = await blockNextWalFile(dir);
        await db.query('SELECT pg_switch_wal()');
        const panic = await db.query('INSERT INTO kept VALUES (2)').catch((error: unknown) => error);
        expect(panic).toBeInstanceOf(EventLogStopped);
        expect((panic as Error).message).toMatch(WAL_FILE_PANIC);

        // Before the thread ended on a PANIC, PGlite's next query never returned.
        await expect(db.query('SELECT 1')).rejects.toThrow(WAL_FILE_PANIC);
        expect((await db.lost)?.message).toMatch(WAL_FILE_PANIC);
        await db.close();

        // Recovery needs that file too: the start fails, saying why in PostgreSQL's words.
        await expect(startPgliteThread(dir, PGLITE_SETTINGS)).rejects.toThrow(/FATAL: .*xlogtemp\.42/);
        await rm(blocker, { recursive: true });
        const again = await startPgliteThread(dir, PGLITE_SETTINGS);
        expect((await again.query<{ n: number }>('SELECT n FROM kept')).rows).toEqual([{ n: 1 }]);
        await again.close();
      }),
    60_000,
  );

  it(
    'ends the thread on a PANIC inside a transaction, whose commit PGlite would never return',
    () =>
      inNewDataDir(async (dir) => {
        const db = await startPgliteThread(dir, PGLITE_SETTINGS);
        await db.exec('CREATE TABLE kept (n integer)');
        await blockNextWalFile(dir);
        const ended = await db
          .transaction(async (tx) => {
            await tx.query('INSERT INTO kept VALUES (1)');
            await tx.query('SELECT pg_switch_wal()');
            await tx.query('INSERT INTO kept VALUES (2)');
          })
          .catch((error: unknown) => error);
        expect(ended).toBeInstanceOf(EventLogStopped);
        expect((ended as Error).message).toMatch(WAL_FILE_PANIC);
        expect((await db.lost)?.message).toMatch(WAL_FILE_PANIC);
        await db.close();
      }),
    60_000,
  );

  it('refuses calls once closed, with an error saying why', async () => {
    const closed = await startPgliteThread(undefined, PGLITE_SETTINGS);
    await closed.close();
    await expect(closed.query('SELECT 1')).rejects.toThrow(/PGlite thread exited/);
  });
});

describe('upkeep by the PGlite thread (PostgreSQL alone never checkpoints nor vacuums)', () => {
  const policy = (changes: Partial<MaintenancePolicy>) => ({
    ...PGLITE_MAINTENANCE,
    checkEveryMs: 20,
    ...changes,
  });
  const CHECKPOINT = 'SELECT checkpoint_lsn::text AS lsn FROM pg_control_checkpoint()';
  const lastCheckpoint = async (db: SqlDriver) => (await db.query<{ lsn: string }>(CHECKPOINT)).rows[0]!.lsn;
  const until = async (what: () => Promise<boolean>, timeoutMs = 10_000) => {
    for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; ) {
      if (await what()) return true;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return false;
  };
  const write = (db: SqlDriver, rows: number) =>
    db.query("INSERT INTO filler SELECT repeat('x', 1000) FROM generate_series(1, $1)", [rows]);
  /** Runs `work` on an in-memory thread with the policy's `changes`, closed afterwards. */
  const inThread = async (changes: Partial<MaintenancePolicy>, work: (db: SqlDriver) => Promise<void>) => {
    const db = await startPgliteThread(undefined, PGLITE_SETTINGS, policy(changes));
    try {
      await work(db);
    } finally {
      await db.close();
    }
  };

  it('asks for one once the policy WAL was written since the last, so a crash replays little', () =>
    inThread({ walBytes: 1024 * 1024, everyMs: 3_600_000 }, async (db) => {
      await db.exec('CREATE TABLE filler (body text)');
      const first = await lastCheckpoint(db);
      await write(db, 100); // ~0.1 MB of WAL: not yet
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await lastCheckpoint(db)).toBe(first);

      for (let i = 0; i < 8; i++) await write(db, 1000); // ~8 MB, in steps of ~1 MB
      // What a crash would replay from the last checkpoint drops back under the policy's bound.
      const replayed = async () =>
        (
          await db.query<{ bytes: number }>(
            'SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn)::float8 AS bytes FROM pg_control_checkpoint()',
          )
        ).rows[0]!.bytes;
      expect(await until(async () => (await replayed()) < 1024 * 1024)).toBe(true);
      expect(await lastCheckpoint(db)).not.toBe(first);
    }));

  it('asks for one after the policy time if anything was written, and none while nothing is', () =>
    inThread({ walBytes: 1024 ** 3, everyMs: 150 }, async (db) => {
      const idle = await lastCheckpoint(db);
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(await lastCheckpoint(db)).toBe(idle);

      await db.exec("CREATE TABLE filler (body text); INSERT INTO filler VALUES ('x')");
      expect(await until(async () => (await lastCheckpoint(db)) !== idle)).toBe(true);
      // Its own record is not a write that asks for another.
      const after = await lastCheckpoint(db);
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(await lastCheckpoint(db)).toBe(after);
    }));

  it(
    'ends the thread when a checkpoint it asked for PANICs, saying why, as a query would',
    () =>
      inNewDataDir(async (dir) => {
        const db = await startPgliteThread(
          dir,
          PGLITE_SETTINGS,
          policy({ walBytes: 1024 * 1024, everyMs: 3_600_000 }),
        );
        await db.exec('CREATE TABLE filler (body text)');
        // A checkpoint first removes this file; a folder in its place fails that, and PostgreSQL PANICs.
        await mkdir(join(dir, 'pg_logical', 'replorigin_checkpoint.tmp', 'in-the-way'), { recursive: true });
        // Writing on until the checkpoint they ask for fails: the write then in flight is refused.
        let refused: unknown;
        for (let i = 0; i < 20 && refused === undefined; i++) {
          await write(db, 1000).catch((error: unknown) => {
            refused = error;
          });
        }

        const reason =
          /the embedded database stopped \(PANIC: could not remove file pg_logical\/replorigin_checkpoint\.tmp/;
        expect((await db.lost)?.message).toMatch(reason);
        expect(refused).toBeInstanceOf(EventLogStopped);
        await expect(db.query('SELECT 1')).rejects.toThrow(reason);
        await db.close();
      }),
    60_000,
  );

  it("vacuums the database's own tables as WAL is written, so old versions of rows updated in place are reclaimed", () =>
    inThread({ freezeWalBytes: 256 * 1024 }, async (db) => {
      await db.exec(
        "CREATE TABLE snapshots (name text PRIMARY KEY, state text); INSERT INTO snapshots VALUES ('a', '')",
      );
      const vacuums = async () =>
        (
          await db.query<{ n: string }>(
            "SELECT vacuum_count AS n FROM pg_stat_user_tables WHERE relname = 'snapshots'",
          )
        ).rows[0]!.n;
      expect(Number(await vacuums())).toBe(0);
      // A value too large to stay in its row (TOASTed), replaced as a read model's snapshot is.
      for (let i = 0; i < 300; i++)
        await db.query("UPDATE snapshots SET state = $1 WHERE name = 'a'", [
          `${i}:${randomBytes(6_000).toString('base64')}`,
        ]);
      expect(await until(async () => Number(await vacuums()) > 0)).toBe(true);
    }));

  /** Spends `n` transaction ids: each statement outside a transaction commits on its own. */
  const commitEach = async (db: SqlDriver, n: number) => {
    await db.exec('CREATE TABLE appended (n integer)');
    for (let i = 0; i < n; i++) await db.query('INSERT INTO appended VALUES ($1)', [i]);
  };
  /** How many transactions ago the oldest unfrozen row of the database, and of `appended`, was written. */
  const ages = async (db: SqlDriver) =>
    (
      await db.query<{ database: number; appended: number }>(
        `SELECT (SELECT age(datfrozenxid) FROM pg_database WHERE datname = current_database()) AS database,
                (SELECT age(relfrozenxid) FROM pg_class WHERE relname = 'appended') AS appended`,
      )
    ).rows[0]!;

  it('freezes its own tables as WAL is written, leaving the catalogs for their rarer pass', () =>
    inThread({ freezeWalBytes: 64 * 1024, freezeAllAtAge: 2 ** 30 }, async (db) => {
      await commitEach(db, 500);
      await db.exec('CREATE TABLE filler (body text)');
      await write(db, 200); // ~200 KB more of WAL
      expect(await until(async () => (await ages(db)).appended < 50)).toBe(true);
      expect((await ages(db)).database).toBeGreaterThanOrEqual(500);
    }));

  it('freezes the whole database once its oldest transaction is old enough, so the wraparound guard never stops writes', () =>
    inThread({ freezeWalBytes: 2 ** 40, freezeAllAtAge: 1_000 }, async (db) => {
      // The guard counts from the oldest unfrozen row of any database, initdb's templates included.
      const databases = await db.query<{ datname: string }>('SELECT datname FROM pg_database');
      expect(databases.rows.map((d) => d.datname)).toEqual(['postgres']);
      await commitEach(db, 1_200);
      expect(await until(async () => (await ages(db)).database < 500)).toBe(true);
      expect((await ages(db)).appended).toBeLessThan(500);
    }));

  it(
    'freezes at start what an earlier run left unfrozen, before any caller waits behind it',
    () =>
      inNewDataDir(async (dir) => {
        const noPasses = policy({ freezeWalBytes: 2 ** 40, freezeAllAtAge: 2 ** 30 });
        const before = await startPgliteThread(dir, PGLITE_SETTINGS, noPasses);
        await before.exec('CREATE TABLE appended (n integer)');
        // 25,000 transaction ids in one statement: each block with an exception handler is a
        // subtransaction, and each insert in one takes an id of its own.
        await before.exec(
          'DO $$ BEGIN FOR i IN 1..25000 LOOP BEGIN INSERT INTO appended VALUES (i); EXCEPTION WHEN OTHERS THEN NULL; END; END LOOP; END $$',
        );
        expect((await ages(before)).appended).toBeGreaterThan(25_000);
        await before.close();

        const after = await startPgliteThread(dir, PGLITE_SETTINGS, noPasses);
        try {
          expect((await ages(after)).appended).toBeLessThan(10);
        } finally {
          await after.close();
        }
      }),
    60_000,
  );
});
