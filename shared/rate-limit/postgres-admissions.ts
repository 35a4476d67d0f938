import type pg from 'pg';
import type { AdmissionStore, Count } from './admissions.ts';

/** Fixed-window counts: generations' requests and tokens, and login and OAuth attempts. */
export const COUNTERS_TABLE = 'studio_rate_limits';
export const LEASES_TABLE = 'studio_rate_leases';
/** The class of the two-key advisory locks taken per slot key (the second key is its hash). */
const SLOT_LOCK_CLASS = 8_600_200;

export const CREATE_COUNTERS_TABLE = `CREATE UNLOGGED TABLE IF NOT EXISTS ${COUNTERS_TABLE} (key varchar(255) PRIMARY KEY, points integer NOT NULL DEFAULT 0, expire bigint)`;
export const CREATE_LEASES_TABLE = `CREATE UNLOGGED TABLE IF NOT EXISTS ${LEASES_TABLE} (key varchar(255) NOT NULL, lease_id varchar(64) NOT NULL, expires_at bigint NOT NULL, PRIMARY KEY (key, lease_id))`;

/**
 * Adds `p_amount` to a count in its fixed window (a row whose `expire` has passed starts a new
 * window), never below 0, and answers the count and its window's end.
 */
const CREATE_COUNT_FUNCTION = `CREATE OR REPLACE FUNCTION studio_rate_count(
  p_key varchar, p_amount integer, p_now bigint, p_window_ms bigint, OUT used integer, OUT ends_at bigint
) LANGUAGE sql AS $$
  INSERT INTO ${COUNTERS_TABLE} AS c (key, points, expire) VALUES (p_key, GREATEST(p_amount, 0), p_now + p_window_ms)
  ON CONFLICT (key) DO UPDATE SET
    points = GREATEST(CASE WHEN c.expire IS NULL OR c.expire > p_now THEN c.points + p_amount ELSE p_amount END, 0),
    expire = CASE WHEN c.expire IS NULL OR c.expire > p_now THEN c.expire ELSE p_now + p_window_ms END
  RETURNING points, expire
$$`;

/**
 * One generation's admission (see `Admission`) in one call. The requests are counted first, each
 * row locked until the transaction ends, so admissions on the same keys pass one at a time; a
 * refusal takes its counts back before anyone can see them. Each slot key is locked (a
 * transaction-scoped advisory lock, keys in order), then its live leases counted: every statement
 * runs with a snapshot taken after the lock, so it sees every lease committed before. Without the
 * lock two processes could both count two of three slots held and both take the third.
 */
const CREATE_ADMIT_FUNCTION = `CREATE OR REPLACE FUNCTION studio_rate_admit(
  p_request_keys varchar[], p_request_limits integer[], p_token_keys varchar[], p_token_limits integer[],
  p_slot_keys varchar[], p_slot_max integer[], p_lease_id varchar, p_lease_ms bigint, p_now bigint,
  p_window_ms bigint,
  OUT admitted boolean, OUT request_used integer[], OUT request_ends bigint[],
  OUT token_used integer[], OUT token_ends bigint[], OUT slot_full boolean[]
) LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
  i integer;
  k varchar;
  used integer;
  ends bigint;
  held integer;
  refused boolean := false;
BEGIN
  request_used := '{}'; request_ends := '{}'; token_used := '{}'; token_ends := '{}'; slot_full := '{}';
  FOR i IN 1 .. coalesce(array_length(p_request_keys, 1), 0) LOOP
    SELECT c.used, c.ends_at INTO used, ends FROM studio_rate_count(p_request_keys[i], 1, p_now, p_window_ms) AS c;
    request_used := request_used || used;
    request_ends := request_ends || ends;
    refused := refused OR used > p_request_limits[i];
  END LOOP;
  FOR i IN 1 .. coalesce(array_length(p_token_keys, 1), 0) LOOP
    SELECT coalesce(max(points), 0), coalesce(max(expire), p_now) INTO used, ends
      FROM ${COUNTERS_TABLE} WHERE key = p_token_keys[i] AND (expire > p_now OR expire IS NULL);
    token_used := token_used || used;
    token_ends := token_ends || ends;
    refused := refused OR used >= p_token_limits[i];
  END LOOP;
  IF NOT refused THEN
    FOR k IN SELECT unnest(p_slot_keys) ORDER BY 1 LOOP
      PERFORM pg_advisory_xact_lock(${SLOT_LOCK_CLASS}, hashtext(k));
    END LOOP;
    FOR i IN 1 .. coalesce(array_length(p_slot_keys, 1), 0) LOOP
      DELETE FROM ${LEASES_TABLE} WHERE key = p_slot_keys[i] AND expires_at <= p_now;
      SELECT count(*) INTO held FROM ${LEASES_TABLE} WHERE key = p_slot_keys[i];
      slot_full := slot_full || (held >= p_slot_max[i]);
      refused := refused OR held >= p_slot_max[i];
    END LOOP;
  ELSE
    FOR i IN 1 .. coalesce(array_length(p_slot_keys, 1), 0) LOOP
      slot_full := slot_full || false;
    END LOOP;
  END IF;
  admitted := NOT refused;
  IF refused THEN
    FOR i IN 1 .. coalesce(array_length(p_request_keys, 1), 0) LOOP
      UPDATE ${COUNTERS_TABLE} SET points = points - 1 WHERE key = p_request_keys[i];
      request_used[i] := request_used[i] - 1;
    END LOOP;
  ELSE
    INSERT INTO ${LEASES_TABLE} (key, lease_id, expires_at)
      SELECT s, p_lease_id, p_now + p_lease_ms FROM unnest(p_slot_keys) AS s;
  END IF;
END;
$$`;

/** A generation's end in one call: its leases given back, the tokens it used charged. */
const CREATE_SETTLE_FUNCTION = `CREATE OR REPLACE FUNCTION studio_rate_settle(
  p_slot_keys varchar[], p_lease_id varchar, p_token_keys varchar[], p_charges integer[], p_now bigint,
  p_window_ms bigint
) RETURNS void LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
  i integer;
BEGIN
  DELETE FROM ${LEASES_TABLE} WHERE key = ANY(p_slot_keys) AND lease_id = p_lease_id;
  FOR i IN 1 .. coalesce(array_length(p_token_keys, 1), 0) LOOP
    PERFORM studio_rate_count(p_token_keys[i], p_charges[i], p_now, p_window_ms);
  END LOOP;
END;
$$`;

/**
 * What `postgresCounters` runs at start, under its lock, after the tables exist. The two PL/pgSQL
 * functions run with `enable_seqscan` off: PL/pgSQL caches each statement's plan, made while the
 * tables are small, and a sequential scan planned then would go on reading every dead row of a
 * table that gains and loses a row per generation.
 */
export const CREATE_ADMISSION_FUNCTIONS = [
  CREATE_COUNT_FUNCTION,
  CREATE_ADMIT_FUNCTION,
  CREATE_SETTLE_FUNCTION,
];

interface AdmitRow {
  admitted: boolean;
  request_used: number[];
  request_ends: string[];
  token_used: number[];
  token_ends: string[];
  slot_full: boolean[];
}

/** Counts and slots in the two tables, shared by every process on the database. */
export function postgresAdmissions(pool: pg.Pool): AdmissionStore {
  return {
    async admit(ask) {
      const now = Date.now();
      const { rows } = await pool.query<AdmitRow>(
        'SELECT * FROM studio_rate_admit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
        [
          ask.requests.map((r) => r.key),
          ask.requests.map((r) => r.limit),
          ask.tokens.map((t) => t.key),
          ask.tokens.map((t) => t.limit),
          ask.slots.map((s) => s.key),
          ask.slots.map((s) => s.max),
          ask.leaseId,
          ask.leaseMs,
          now,
          ask.windowMs,
        ],
      );
      const row = rows[0]!;
      const counts = (used: number[], ends: string[]): Count[] =>
        used.map((u, i) => ({ used: u, resetMs: Math.max(0, Number(ends[i]) - now) }));
      return {
        admitted: row.admitted,
        requests: counts(row.request_used, row.request_ends),
        tokens: counts(row.token_used, row.token_ends),
        full: row.slot_full,
      };
    },
    async settle(done) {
      await pool.query('SELECT studio_rate_settle($1, $2, $3, $4, $5, $6)', [
        done.slots,
        done.leaseId,
        done.tokens.map((t) => t.key),
        done.tokens.map((t) => t.charge),
        Date.now(),
        done.windowMs,
      ]);
    },
    async renew(slots, leaseId, leaseMs) {
      await pool.query(`UPDATE ${LEASES_TABLE} SET expires_at = $3 WHERE key = ANY($1) AND lease_id = $2`, [
        slots,
        leaseId,
        Date.now() + leaseMs,
      ]);
    },
  };
}
