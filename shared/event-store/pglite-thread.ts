import { Worker } from 'node:worker_threads';
import { fromRoot } from '../paths.ts';
import type { SqlDriver, SqlExecutor } from './sql-driver.ts';
import { EventLogStopped } from './types.ts';

type Request =
  | { op: 'query'; sql: string; params?: unknown[]; tx?: number }
  | { op: 'exec'; sql: string; tx?: number }
  | { op: 'begin' }
  | { op: 'commit' | 'rollback'; tx: number }
  | { op: 'close' };

/** The id of the message the worker sends when PostgreSQL PANICs, just before its thread ends. */
const PANICKED = -1;

interface Reply {
  id: number;
  result?: unknown;
  error?: {
    name: string;
    message: string;
    code?: string;
    detail?: string;
    severity?: string;
    /** With a PANIC: PostgreSQL's FATAL and PANIC lines, the first PANIC saying what went wrong. */
    stopped?: string[];
  };
}

/** When the thread checkpoints and vacuums, as PostgreSQL's server processes would (`pglite-worker.mjs`). */
export interface MaintenancePolicy {
  /** A checkpoint once this much WAL was written since the last: what a crash has to replay at most. */
  walBytes: number;
  /** Or this long after the last one, if anything was written since. */
  everyMs: number;
  /** The database's own tables vacuumed and frozen once this much WAL was written since they last were. */
  freezeWalBytes: number;
  /** The whole database, catalogs included, frozen once its oldest unfrozen transaction is this old. */
  freezeAllAtAge: number;
  /** How often the thread looks. */
  checkEveryMs: number;
}

/**
 * 32 MiB of WAL is about 40,000 events and replays in under a second after a crash; the time bound is
 * PostgreSQL's default `checkpoint_timeout`. 4 MiB of new pages freeze in a few ms while they are still
 * in PostgreSQL's 16 MB of buffers. The catalogs' pass comes every 10 million transactions (half a day
 * at full load, months at a few requests a second), 200 times before the wraparound guard would stop
 * writes. docs/benchmarks.md has the measurements.
 */
export const PGLITE_MAINTENANCE: MaintenancePolicy = {
  walBytes: 32 * 1024 * 1024,
  everyMs: 5 * 60_000,
  freezeWalBytes: 4 * 1024 * 1024,
  freezeAllAtAge: 10_000_000,
  checkEveryMs: 1_000,
};

/**
 * PGlite in a worker thread (`pglite-worker.mjs`), behind the same `SqlDriver` as any database:
 * PostgreSQL's WASM and PGlite's protocol code run beside the event loop instead of on it, so a
 * request being relayed never waits for an append to be stored. `settings` are start parameters added
 * to PGlite's own. Resolves once the database is open.
 */
export async function startPgliteThread(
  dataDir: string | undefined,
  settings: readonly string[],
  maintenance: MaintenancePolicy = PGLITE_MAINTENANCE,
): Promise<SqlDriver> {
  const worker = new Worker(fromRoot('shared', 'event-store', 'pglite-worker.mjs'), {
    workerData: { dataDir, settings, maintenance },
    // Plain JavaScript: none of the process's flags (a TypeScript loader, `--input-type`) apply.
    execArgv: [],
  });
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: unknown) => void }>();
  let nextId = 1;
  let failure: Error | undefined;
  let closing = false;
  let onLost: (error: Error) => void = () => {};
  const lost = new Promise<Error>((resolve) => {
    onLost = resolve;
  });

  const settle = (reply: Reply) => {
    // PostgreSQL PANICked: the worker sends why, then ends its thread (pglite-worker.mjs), and every
    // call, that one and each later, is refused with it. Without its quotes: log lines cut a message
    // at its first quote (values may follow one), and a PANIC names a file of the database, which the
    // operator needs to see.
    if (reply.id === PANICKED) {
      const why = reply.error?.stopped?.join('; ') ?? `PANIC: ${reply.error?.message}`;
      failure ??= new EventLogStopped(
        `the embedded database stopped (${why.replaceAll('"', '')}); it recovers from its log at the next start`,
      );
      return;
    }
    const waiting = pending.get(reply.id);
    if (!waiting) return;
    pending.delete(reply.id);
    // The thread keeps the process alive only while an answer is awaited.
    if (pending.size === 0) worker.unref();
    if (reply.error) waiting.reject(Object.assign(new Error(reply.error.message), reply.error));
    else waiting.resolve(reply.result);
  };
  const failAll = (error: Error) => {
    failure ??= error;
    const waiting = [...pending.values()];
    pending.clear();
    worker.unref();
    for (const call of waiting) call.reject(failure);
  };
  worker.on('message', settle);
  worker.on('error', (error) => failAll(new EventLogStopped(`the PGlite thread failed: ${error.message}`)));
  worker.on('exit', (code) => {
    failAll(new EventLogStopped(`the PGlite thread exited (code ${code})`));
    if (!closing && failure) onLost(failure);
  });

  const call = <T>(request: Request): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (failure) return reject(failure);
      const id = nextId++;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.ref();
      try {
        worker.postMessage({ ...request, id });
      } catch (error) {
        // A parameter that cannot be copied to the thread (a function, say): this call fails alone.
        settle({
          id,
          error: { name: 'TypeError', message: `cannot send to the PGlite thread: ${String(error)}` },
        });
      }
    });
  // The worker answers id 0 once PGlite is open (or could not open).
  await new Promise((resolve, reject) => pending.set(0, { resolve, reject }));

  const executor = (tx?: number): SqlExecutor => ({
    query: async <Row>(sql: string, params?: unknown[]) => ({
      rows: await call<Row[]>({ op: 'query', sql, params, tx }),
    }),
    exec: async (sql: string) => {
      await call({ op: 'exec', sql, tx });
    },
  });
  return {
    ...executor(),
    async transaction(work) {
      const tx = await call<number>({ op: 'begin' });
      let result: Awaited<ReturnType<typeof work>>;
      try {
        result = await work(executor(tx));
      } catch (error) {
        await call({ op: 'rollback', tx });
        throw error;
      }
      await call({ op: 'commit', tx });
      return result;
    },
    lost,
    async close() {
      closing = true;
      if (!failure) await call({ op: 'close' });
      await worker.terminate();
    },
  };
}
