import type pg from 'pg';

/**
 * Runs `setUp` in one transaction holding an advisory lock named `name`, so processes starting
 * together on one database create their tables one at a time: `CREATE … IF NOT EXISTS` alone
 * races (both pass the check, and the second fails with "type … already exists").
 */
export async function setUpSerialized(
  pool: pg.Pool,
  name: string,
  setUp: (client: pg.PoolClient) => Promise<void>,
): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [name]);
    await setUp(client);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
