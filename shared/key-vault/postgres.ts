import { setUpSerialized } from '../postgres-set-up.ts';
import type { KeyVault } from './types.ts';
import { checkKeyId } from './types.ts';

const TABLE = 'studio_key_vault';

/** Keys in a table of the database every gateway shares; destroying one deletes its row. */
export async function postgresKeyVault(connectionString: string): Promise<KeyVault> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString, max: 2 });
  pool.on('error', () => undefined); // an idle client's error surfaces on its next use
  await setUpSerialized(pool, TABLE, async (client) => {
    await client.query(`CREATE TABLE IF NOT EXISTS ${TABLE} (id text PRIMARY KEY, value text NOT NULL)`);
  }).catch(async (error: unknown) => {
    await pool.end();
    throw error;
  });
  return {
    kind: 'postgres',
    async putIfAbsent(id, value) {
      await pool.query(`INSERT INTO ${TABLE} (id, value) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, [
        checkKeyId(id),
        value,
      ]);
      const kept = await pool.query<{ value: string }>(`SELECT value FROM ${TABLE} WHERE id = $1`, [id]);
      return kept.rows[0]?.value ?? value;
    },
    async get(id) {
      const found = await pool.query<{ value: string }>(`SELECT value FROM ${TABLE} WHERE id = $1`, [id]);
      return found.rows[0]?.value;
    },
    async list(prefix) {
      const found = await pool.query<{ id: string }>(
        `SELECT id FROM ${TABLE} WHERE starts_with(id, $1) ORDER BY id`,
        [prefix],
      );
      return found.rows.map((row) => row.id);
    },
    async destroy(ids) {
      if (ids.length === 0) return 0;
      const deleted = await pool.query(`DELETE FROM ${TABLE} WHERE id = ANY($1)`, [[...ids]]);
      return deleted.rowCount ?? 0;
    },
    close: () => pool.end(),
  };
}
