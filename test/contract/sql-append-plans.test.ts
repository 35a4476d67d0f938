import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate } from '../../shared/event-store/migrations.ts';
import { postgresDriver } from '../../shared/event-store/postgres.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';

const database = await freshPostgresDatabase();
afterAll(async () => {
  await database?.drop();
});

/** One append of `count` events to `stream` (appends of a few dozen events, as a studio's first). */
const append = (client: pg.Client, stream: string, count = 30) =>
  client.query(
    "SELECT outcome FROM studio_append_batch(ARRAY[$1], ARRAY['any'], ARRAY[$2::integer], $3::uuid[], " +
      "array_fill('Thing'::text, ARRAY[$2::integer]), array_fill('{}'::text, ARRAY[$2::integer]), ARRAY['{}'], false)",
    [stream, count, Array.from({ length: count }, () => randomUUID())],
  );

/**
 * A connection that lived while the log was small keeps using the function after it has grown: the
 * check for event ids already stored must still use the index. (PL/pgSQL caches a generic plan per
 * connection; one made on a near-empty table is a sequential scan, which made every append read the
 * whole log.) auto_explain reports the plans of the function's statements to this connection.
 */
describe.skipIf(database === undefined)(
  database
    ? 'postgres: the append functions on a log that grew'
    : `postgres (skipped: ${postgresUnavailableReason})`,
  () => {
    it('looks event ids up by index, on a connection that first appended while the log was empty', async () => {
      const driver = postgresDriver(new pg.Pool({ connectionString: database!.url, max: 1 }));
      await migrate(driver);
      await driver.close();

      const longLived = new pg.Client({ connectionString: database!.url });
      await longLived.connect();
      try {
        // Enough calls on a near-empty log for PL/pgSQL to settle on a plan.
        for (let i = 0; i < 10; i++) await append(longLived, `small-${i}`);

        // The log grows by other connections; no ANALYZE has run since.
        const writer = new pg.Client({ connectionString: database!.url });
        await writer.connect();
        await writer.query(
          `INSERT INTO events (position, stream_id, revision, event_id, type, data, metadata)
           SELECT 1000000000000 + n, 'bulk-' || (n / 100), n % 100, gen_random_uuid(), 'Thing', '{}', '{}'
           FROM generate_series(0, 99999) AS n`,
        );
        await writer.end();

        const plans: string[] = [];
        longLived.on('notice', (notice) => plans.push(notice.message ?? ''));
        await longLived.query("LOAD 'auto_explain'");
        await longLived.query('SET auto_explain.log_min_duration = 0');
        await longLived.query('SET auto_explain.log_nested_statements = on');
        await longLived.query('SET auto_explain.log_level = notice');
        await append(longLived, 'after-growth');

        const idCheck = plans.find((plan) => plan.includes('FROM events e WHERE e.event_id = ANY (ids)'));
        expect(idCheck, plans.join('\n---\n')).toBeDefined();
        expect(idCheck).not.toMatch(/Seq Scan on events/);
        expect(idCheck).toMatch(/Index (Only )?Scan (using|on) events_event_id_key/);
        // Nor does any other statement of the append read a whole table.
        for (const plan of plans) expect(plan).not.toMatch(/Seq Scan on (events|streams)/);
      } finally {
        await longLived.end();
      }
    });
  },
);
