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
  const live = (key: string, at: number) => {
    const leases = byKey.get(key) ?? new Map<string, number>();
    for (const [id, expiresAt] of leases) if (expiresAt <= at) leases.delete(id);
    return leases;
  };
  return {
    async acquire(key, id, max, ttlMs) {
      const at = now();
      const leases = live(key, at);
      if (leases.size >= max) return false;
      byKey.set(key, leases.set(id, at + ttlMs));
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

export const CREATE_LEASES_TABLE = `CREATE UNLOGGED TABLE IF NOT EXISTS ${LEASES_TABLE} (key varchar(255) NOT NULL, lease_id varchar(64) NOT NULL, expires_at bigint NOT NULL, PRIMARY KEY (key, lease_id))`;

/**
 * Takes a lease in one call: a transaction-scoped advisory lock on the key, then the count of live
 * leases and the insert, each statement of the function with a snapshot taken after the lock, so
 * it sees every lease committed before it got the lock. Without the lock two processes could both
 * count two of three slots held and both take the third. The table is unlogged (see
 * `postgresCounters`), so neither this nor a release waits for the disk.
 */
export const CREATE_LEASE_ACQUIRE_FUNCTION = `CREATE OR REPLACE FUNCTION ${LEASES_TABLE}_acquire(
  p_key varchar, p_id varchar, p_max integer, p_now bigint, p_expires_at bigint
) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  held integer;
BEGIN
  PERFORM pg_advisory_xact_lock(${LEASE_LOCK_CLASS}, hashtext(p_key));
  DELETE FROM ${LEASES_TABLE} WHERE key = p_key AND expires_at <= p_now;
  SELECT count(*) INTO held FROM ${LEASES_TABLE} WHERE key = p_key;
  IF held >= p_max THEN
    RETURN false;
  END IF;
  INSERT INTO ${LEASES_TABLE} (key, lease_id, expires_at) VALUES (p_key, p_id, p_expires_at);
  RETURN true;
END;
$$`;

export const CREATE_LEASE_RELEASE_FUNCTION = `CREATE OR REPLACE FUNCTION ${LEASES_TABLE}_release(
  p_key varchar, p_id varchar
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM ${LEASES_TABLE} WHERE key = p_key AND lease_id = p_id;
END;
$$`;

/** Leases in one table, shared by every process on the database (see `CREATE_LEASE_ACQUIRE_FUNCTION`). */
export function postgresLeases(pool: pg.Pool): LeaseStore {
  return {
    async acquire(key, id, max, ttlMs) {
      const now = Date.now();
      const { rows } = await pool.query<{ taken: boolean }>(
        `SELECT ${LEASES_TABLE}_acquire($1, $2, $3, $4, $5) AS taken`,
        [key, id, max, now, now + ttlMs],
      );
      return rows[0]!.taken;
    },
    async renew(key, id, ttlMs) {
      await pool.query(`UPDATE ${LEASES_TABLE} SET expires_at = $3 WHERE key = $1 AND lease_id = $2`, [
        key,
        id,
        Date.now() + ttlMs,
      ]);
    },
    async release(key, id) {
      await pool.query(`SELECT ${LEASES_TABLE}_release($1, $2)`, [key, id]);
    },
  };
}
