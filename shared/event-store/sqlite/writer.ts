import type { Database } from 'better-sqlite3';
import { messageOf } from '../../errors.ts';
import { EventLogStopped } from '../types.ts';
import type { WalReserve } from './wal-reserve.ts';
import type { WalSync } from './wal-sync.ts';

/**
 * The one connection that writes the embedded log, and the queue in front of it: appends and
 * checkpoint saves take turns, so a transaction held open across an await (the contract suite's
 * `beforeCommit` hook) is never joined by another's statements.
 *
 * A write that fails for the disk's sake is told apart from one refused: a full disk refuses that
 * transaction and the next may succeed; an I/O error (a failed fsync above all) means the file may
 * not hold what was acknowledged, so the log stops for this process and `lost` says why. The next
 * start recovers it from the WAL.
 */
export class SqliteWriter {
  #queue: Promise<unknown> = Promise.resolve();
  #stopped: EventLogStopped | undefined;
  #stop!: (error: EventLogStopped) => void;
  readonly lost = new Promise<Error>((resolve) => {
    this.#stop = resolve;
  });

  constructor(
    readonly db: Database,
    /** Room made ahead of the WAL before each write (see wal-reserve.ts). */
    private readonly reserve?: WalReserve,
    /** Where the commit is synced after SQLite's, when it is (see wal-sync.ts). */
    private readonly wal?: Pick<WalSync, 'sync'>,
  ) {}

  get stopped(): boolean {
    return this.#stopped !== undefined;
  }

  /** Throws the reason once the log has stopped. */
  assertRunning(): void {
    if (this.#stopped) throw this.#stopped;
  }

  /**
   * Runs `work` after every write queued before it, and resolves once what it wrote is on disk; a
   * failure that stops the log is rethrown as such.
   */
  run<T>(work: (db: Database) => T | Promise<T>): Promise<T> {
    const result = this.#queue.then(async () => {
      this.assertRunning();
      let done: T;
      try {
        await this.reserve?.ensure();
        done = await work(this.db);
      } catch (error) {
        throw this.#classify(error);
      }
      try {
        await this.wal?.sync();
      } catch (error) {
        // Whatever the reason, what the commit wrote may not be on disk, nor be by a later sync.
        throw this.stop(
          `its WAL sync failed: ${(error as NodeJS.ErrnoException).code ?? messageOf(error)}`,
          error,
        );
      }
      return done;
    });
    this.#queue = result.catch(() => undefined);
    return result;
  }

  /** Runs `work` in one transaction that may await (taken at once, so no other writer slips in). */
  async transaction<T>(db: Database, work: () => Promise<T>): Promise<T> {
    db.exec('BEGIN IMMEDIATE');
    try {
      const result = await work();
      db.exec('COMMIT');
      return result;
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw error;
    }
  }

  /** Resolves once every write queued so far has settled. */
  async idle(): Promise<void> {
    await this.#queue;
  }

  /** Stops the log for this process: every call fails from now on with `why`. */
  stop(why: string, cause: unknown): EventLogStopped {
    if (!this.#stopped) {
      this.#stopped = new EventLogStopped(`the embedded database stopped (${why})`, { cause });
      this.#stop(this.#stopped);
    }
    return this.#stopped;
  }

  #classify(error: unknown): unknown {
    if (!stopsTheLog(error)) return error;
    return this.stop(`${(error as Error).message}: ${sqliteCode(error) ?? 'EIO'}`, error);
  }
}

export function sqliteCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  const { code } = error as { code: unknown };
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

/**
 * An I/O error or a damaged file: what the log holds on disk is no longer known. EIO is the same
 * from Node's own writes (the room made ahead of the WAL).
 */
function stopsTheLog(error: unknown): boolean {
  const code = sqliteCode(error);
  if (code === undefined) return (error as NodeJS.ErrnoException | null)?.code === 'EIO';
  return code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB';
}
