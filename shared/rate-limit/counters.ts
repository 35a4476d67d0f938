import type pg from 'pg';
import { setUpSerialized } from '../postgres-set-up.ts';
import { type AdmissionStore, memoryAdmissions } from './admissions.ts';
import {
  COUNTERS_TABLE,
  CREATE_ADMISSION_FUNCTIONS,
  CREATE_COUNTERS_TABLE,
  CREATE_LEASES_TABLE,
  LEASES_TABLE,
  postgresAdmissions,
} from './postgres-admissions.ts';

/**
 * Where rate-limit counters live. In memory they are this process's; in PostgreSQL or Redis every
 * gateway on the database counts against the same numbers, so N gateways do not allow N times as much.
 */
export interface CounterStore {
  readonly kind: 'memory' | 'postgres' | 'redis';
  /** Counts in fixed windows and slots held at once: generations' rate limits, login attempts. */
  readonly admissions: AdmissionStore;
  close(): Promise<void>;
}

export function memoryCounters(): CounterStore {
  return {
    kind: 'memory',
    admissions: memoryAdmissions(),
    close: async () => undefined,
  };
}

/**
 * Counters and slots in tables of the database (created if missing), through a small pool of their own.
 *
 * Both tables are unlogged: PostgreSQL writes no WAL for them, so a commit that touched only them
 * does not wait for the disk. Every generation of a studio counts and takes a slot on the same
 * keys, so with a flush per commit each waited for the one before it. What that costs: a database
 * that crashes comes back with both tables empty (a minute's counts and the leases of generations
 * under way are forgotten, so a studio may briefly get more than its limits), and standbys do not
 * have them. Counts of a minute are worth neither a disk flush per request nor replication.
 */
export async function postgresCounters(connectionString: string): Promise<CounterStore> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString, max: 8 });
  pool.on('error', () => undefined); // an idle client's error surfaces on its next use
  try {
    await setUpSerialized(pool, COUNTERS_TABLE, async (client) => {
      await client.query(CREATE_COUNTERS_TABLE);
      await client.query(CREATE_LEASES_TABLE);
      await makeUnlogged(client, [COUNTERS_TABLE, LEASES_TABLE]);
      for (const statement of CREATE_ADMISSION_FUNCTIONS) await client.query(statement);
    });
  } catch (error) {
    await pool.end();
    throw error;
  }
  // Rows of keys that were never seen again; an hour after they expired they go. Rows locked by
  // an admission are skipped (until the next sweep): an admission holds several rows at once, and
  // a sweep waiting for one while holding another could deadlock with it.
  const sweep = async () => {
    const anHourAgo = Date.now() - 3_600_000;
    await pool
      .query(
        `DELETE FROM ${COUNTERS_TABLE} WHERE key IN (SELECT key FROM ${COUNTERS_TABLE} WHERE expire < $1 FOR UPDATE SKIP LOCKED)`,
        [anHourAgo],
      )
      .catch(() => undefined);
    await pool
      .query(
        `DELETE FROM ${LEASES_TABLE} WHERE (key, lease_id) IN (SELECT key, lease_id FROM ${LEASES_TABLE} WHERE expires_at < $1 FOR UPDATE SKIP LOCKED)`,
        [anHourAgo],
      )
      .catch(() => undefined);
  };
  const sweeper = setInterval(sweep, 15 * 60_000).unref();
  void sweep();
  return {
    kind: 'postgres',
    admissions: postgresAdmissions(pool),
    async close() {
      clearInterval(sweeper);
      await pool.end();
    },
  };
}

/** Tables made by earlier versions as ordinary (logged) tables become unlogged (see `postgresCounters`). */
async function makeUnlogged(client: pg.ClientBase, tables: readonly string[]): Promise<void> {
  const { rows } = await client.query<{ logged: string }>(
    `SELECT t.name AS logged FROM unnest($1::text[]) AS t(name)
       JOIN pg_class c ON c.oid = to_regclass(t.name) WHERE c.relpersistence = 'p'`,
    [tables],
  );
  for (const { logged } of rows) await client.query(`ALTER TABLE ${logged} SET UNLOGGED`);
}

/**
 * Redis when `REDIS_URL` is set; else PostgreSQL when the gateway keeps its state there (shared by
 * its processes); else memory (the embedded store: one process).
 */
export async function openCounters(options: {
  eventStore: string;
  databaseUrl?: string;
  redisUrl?: string;
}): Promise<CounterStore> {
  if (options.redisUrl) {
    const { redisCounters } = await import('./redis-counters.ts');
    return redisCounters(options.redisUrl);
  }
  const shared =
    (options.eventStore === 'postgres' || options.eventStore === 'kurrentdb') && options.databaseUrl;
  return shared ? postgresCounters(options.databaseUrl!) : memoryCounters();
}
