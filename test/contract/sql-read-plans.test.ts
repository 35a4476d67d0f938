import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate } from '../../shared/event-store/migrations.ts';
import { postgresDriver } from '../../shared/event-store/postgres.ts';
import { FIRST_AFTER } from '../../shared/event-store/sql-store.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';

const database = await freshPostgresDatabase();
afterAll(async () => {
  await database?.drop();
});

/**
 * Subscriptions on PostgreSQL ask, after reading the log up to its visible end, whether committed
 * events wait beyond it: that question must be answered from the position index, not by reading the
 * log, also on a log that grew since its statistics were taken (or that has none yet).
 */
describe.skipIf(database === undefined)(
  database ? 'postgres: reading after a position' : `postgres (skipped: ${postgresUnavailableReason})`,
  () => {
    it('finds whether events follow a position by index, on a log without statistics', async () => {
      const driver = postgresDriver(new pg.Pool({ connectionString: database!.url, max: 1 }));
      await migrate(driver);
      await driver.close();
      const client = new pg.Client({ connectionString: database!.url });
      await client.connect();
      try {
        await client.query(
          `INSERT INTO events (position, stream_id, revision, event_id, type, data, metadata)
           SELECT 1000000 + n, 'bulk-' || (n / 100), n % 100, gen_random_uuid(), 'Thing', '{}', '{}'
           FROM generate_series(0, 19999) AS n`,
        );
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${FIRST_AFTER}`, [1_019_990]);
        const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
        expect(plan).not.toMatch(/Seq Scan/);
        expect(plan).toMatch(/Index (Only )?Scan using events_pkey/);
        // And it answers: events follow 1,019,990, none follow the last.
        expect((await client.query(FIRST_AFTER, [1_019_990])).rows).toHaveLength(1);
        expect((await client.query(FIRST_AFTER, [1_019_999])).rows).toHaveLength(0);
      } finally {
        await client.end();
      }
    });
  },
);
