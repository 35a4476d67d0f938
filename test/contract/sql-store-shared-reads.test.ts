import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../shared/event-store/migrations.ts';
import { postgresDriver } from '../../shared/event-store/postgres.ts';
import type { SqlDriver } from '../../shared/event-store/sql-driver.ts';
import { SqlEventStore } from '../../shared/event-store/sql-store.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';

const META = { actor: 'test' };

const database = await freshPostgresDatabase();
afterAll(async () => {
  await database?.drop();
});

describe.skipIf(database === undefined)(
  database
    ? 'whole-log reads shared by subscribers woken together'
    : `whole-log reads shared (skipped: ${postgresUnavailableReason})`,
  () => {
    let driver: SqlDriver;
    let store: SqlEventStore;
    const reads: string[] = [];
    /** When set, the next read's rows are held back (its query done) until it resolves. */
    let holdNextRead: Promise<void> | undefined;

    beforeAll(async () => {
      const inner = postgresDriver(new pg.Pool({ connectionString: database!.url, max: 4 }));
      await migrate(inner);
      // Counts the statements that read events, so a shared read shows as one.
      driver = {
        ...inner,
        query: async <Row>(sql: string, params?: unknown[]) => {
          if (!sql.startsWith('SELECT position')) return inner.query<Row>(sql, params);
          reads.push(sql);
          const hold = holdNextRead;
          holdNextRead = undefined;
          const result = await inner.query<Row>(sql, params);
          await hold;
          return result;
        },
      };
      store = new SqlEventStore(driver);
    });
    afterAll(() => store.close());

    /**
     * PostgreSQL shows an event once every older transaction has ended, in any database of the
     * server: another suite's open transaction may hold a fresh append back a moment.
     */
    const shown = (position: number) =>
      waitUntil(async () => (await store.headPosition()) >= position, `position ${position} is shown`);

    it('two reads of one page asked at once are one query, with the same events', async () => {
      const { position } = await store.append('s-1', [{ type: 'Noted', data: { n: 1 } }], { metadata: META });
      await shown(position);
      reads.length = 0;
      const [a, b] = await Promise.all([
        store.readAll({ after: 0, limit: 10 }),
        store.readAll({ after: 0, limit: 10 }),
      ]);
      expect(reads).toHaveLength(1);
      expect(b).toBe(a);
      expect(a.map((e) => e.data)).toEqual([{ n: 1 }]);
    });

    it('a read asked after an append was notified does not take a page read before it', async () => {
      const head = await store.headPosition();
      let release = () => {};
      holdNextRead = new Promise<void>((resolve) => {
        release = resolve;
      });
      const before = store.readAll({ after: head, limit: 10 });
      await new Promise((resolve) => setTimeout(resolve, 50)); // its query has run, its rows are held
      const { position } = await store.append('s-1', [{ type: 'Noted', data: { n: 2 } }], { metadata: META });
      await shown(position);
      const after = store.readAll({ after: head, limit: 10 });
      release();
      expect(await before).toEqual([]);
      expect((await after).map((e) => e.data)).toEqual([{ n: 2 }]);
    });

    it('filtered reads and pages of other bounds are read on their own', async () => {
      reads.length = 0;
      await Promise.all([
        store.readAll({ after: 0, limit: 10 }),
        store.readAll({ after: 0, limit: 5 }),
        store.readAll({ after: 0, limit: 10, types: ['Noted'] }),
      ]);
      expect(reads).toHaveLength(3);
    });
  },
);
