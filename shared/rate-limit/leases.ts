import type pg from 'pg';

/**
 * Slots held at once per key (generations in flight). A holder takes a lease that lasts `ttlMs`
 * unless renewed, so the slots of a process that died come back on their own once its leases
 * run out. A plain counter taken on start and given back on release would keep a dead process's
 * slots for ever, and one with a fixed window would reset under holders still running.
 */
export interface LeaseStore {
  /** Takes one of the `max` slots of `key` as lease `id` for `ttlMs`: false when every slot is held. */
  acquire(key: string, id: string, max: number, ttlMs: number): Promise<boolean>;
  /** Extends a lease still held to `ttlMs` from now (a lease that ran out stays out). */
  renew(key: string, id: string, ttlMs: number): Promise<void>;
  release(key: string, id: string): Promise<void>;
}

/** Leases of this process alone. */
export function memoryLeases(now: () => number = Date.now): LeaseStore {
  const byKey = new Map<string, Map<string, number>>();
  const live = (key: string) => {
    const leases = byKey.get(key) ?? new Map<string, number>();
    for (const [id, expiresAt] of leases) if (expiresAt <= now()) leases.delete(id);
    return leases;
  };
  return {
    async acquire(key, id, max, ttlMs) {
      const leases = live(key);
      if (leases.size >= max) return false;
      byKey.set(key, leases.set(id, now() + ttlMs));
      return true;
    },
    async renew(key, id, ttlMs) {
      const leases = byKey.get(key);
      if (leases?.has(id)) leases.set(id, now() + ttlMs);
    },
    async release(key, id) {
      const leases = byKey.get(key);
      leases?.delete(id);
      if (leases?.size === 0) byKey.delete(key);
    },
  };
}

export const LEASES_TABLE = 'studio_rate_leases';
/** The class of the two-key advisory locks taken per lease key (the second key is its hash). */
const LEASE_LOCK_CLASS = 8_600_200;

export const CREATE_LEASES_TABLE = `CREATE TABLE IF NOT EXISTS ${LEASES_TABLE} (key varchar(255) NOT NULL, lease_id varchar(64) NOT NULL, expires_at bigint NOT NULL, PRIMARY KEY (key, lease_id))`;

/**
 * Leases in one table, shared by every process on the database. Taking one counts the live leases
 * and inserts under a transaction-scoped advisory lock on the key: without it two processes could
 * both count two of three slots held and both take the third.
 */
export function postgresLeases(pool: pg.Pool): LeaseStore {
  return {
    async acquire(key, id, max, ttlMs) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        await client.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [LEASE_LOCK_CLASS, key]);
        // A statement after the lock: its snapshot sees every lease committed before we got it.
        const { rows } = await client.query<{ taken: number }>(
          `WITH gone AS (DELETE FROM ${LEASES_TABLE} WHERE key = $1 AND expires_at <= $2),
                held AS (SELECT count(*)::int AS n FROM ${LEASES_TABLE} WHERE key = $1 AND expires_at > $2),
                taken AS (INSERT INTO ${LEASES_TABLE} (key, lease_id, expires_at)
                          SELECT $1, $3, $4 FROM held WHERE n < $5 RETURNING 1)
           SELECT count(*)::int AS taken FROM taken`,
          [key, Date.now(), id, Date.now() + ttlMs, max],
        );
        await client.query('COMMIT');
        return rows[0]!.taken === 1;
      } catch (error) {
        await client.query('ROLLBACK').catch((failed: Error) => {
          broken = failed; // the connection is gone: the pool must not hand it out again
        });
        throw error;
      } finally {
        client.release(broken);
      }
    },
    async renew(key, id, ttlMs) {
      await pool.query(`UPDATE ${LEASES_TABLE} SET expires_at = $3 WHERE key = $1 AND lease_id = $2`, [
        key,
        id,
        Date.now() + ttlMs,
      ]);
    },
    async release(key, id) {
      await pool.query(`DELETE FROM ${LEASES_TABLE} WHERE key = $1 AND lease_id = $2`, [key, id]);
    },
  };
}
