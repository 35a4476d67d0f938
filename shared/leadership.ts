import type { Client } from 'pg';
import type { Logger } from './logger.ts';

/** Work that must run in exactly one process at a time (a forwarder, a job worker). */
export interface SingletonTask {
  /** Runs until `signal` aborts (leadership lost or stopping). */
  run(signal: AbortSignal): Promise<void>;
}

/**
 * A `SingletonTask`'s `run` of which one runs at a time: a run begun (a new term) while the last one
 * still ends starts only once it has.
 */
export function oneRunAtATime(follow: (signal: AbortSignal) => Promise<void>): SingletonTask['run'] {
  let lastRun = Promise.resolve();
  return (signal) => {
    const run = lastRun.then(() => follow(signal));
    lastRun = run.catch(() => undefined);
    return run;
  };
}

export interface Leadership {
  readonly leading: boolean;
  stop(): Promise<void>;
}

/** In one process (memory, SQLite) there is nobody to compete with: the task just runs. */
export function runAlone(task: SingletonTask, logger: Logger): Leadership {
  const controller = new AbortController();
  const done = task
    .run(controller.signal)
    .catch((error) => logger.error({ err: error }, 'singleton task failed'));
  return {
    leading: true,
    async stop() {
      controller.abort();
      await done;
    },
  };
}

/**
 * Among processes sharing one PostgreSQL database: whoever holds the session advisory lock `key`
 * runs the task. The lock lives on a dedicated connection, so when a leader dies its connection
 * closes, the lock is released, and another process takes over at its next try (every `retryMs`).
 */
export function runAsLeader(
  connectionString: string,
  key: number,
  task: SingletonTask,
  logger: Logger,
  retryMs = 2_000,
): Leadership {
  let leading = false;
  let stopped = false;
  let client: Client | undefined;
  let controller: AbortController | undefined;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const lose = (reason: string) => {
    if (!leading) return;
    leading = false;
    controller?.abort();
    logger.warn({ key, reason }, 'leadership lost');
    client?.end().catch(() => undefined);
    client = undefined;
    schedule();
  };

  const attempt = async () => {
    timer = undefined;
    if (stopped) return;
    try {
      // Loaded here, not at the top: processes that never compete for leadership never load `pg`.
      const { default: pg } = await import('pg');
      const c = new pg.Client({ connectionString });
      c.on('error', () => lose('connection error'));
      c.on('end', () => lose('connection ended'));
      await c.connect();
      const { rows } = await c.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [key]);
      if (!rows[0]?.locked || stopped) {
        await c.end();
        return schedule();
      }
      client = c;
      leading = true;
      controller = new AbortController();
      logger.info({ key }, 'leadership taken');
      running = task
        .run(controller.signal)
        .catch((error) => logger.error({ err: error, key }, 'singleton task failed'))
        .finally(() => lose('task ended'));
    } catch (error) {
      logger.debug({ err: error, key }, 'could not try for leadership');
      schedule();
    }
  };

  const schedule = () => {
    if (stopped || timer) return;
    timer = setTimeout(() => void attempt(), retryMs);
    timer.unref();
  };

  void attempt();
  return {
    get leading() {
      return leading;
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      controller?.abort();
      await running;
      await client?.end().catch(() => undefined);
    },
  };
}
