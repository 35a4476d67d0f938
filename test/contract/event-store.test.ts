import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openKurrentDbStore } from '../../shared/event-store/kurrentdb/open.ts';
import { KurrentDbEventStore } from '../../shared/event-store/kurrentdb/store.ts';
import { MemoryEventStore } from '../../shared/event-store/memory.ts';
import { openPostgresStore } from '../../shared/event-store/postgres.ts';
import type { ReadAllOptions, StoredEvent } from '../../shared/event-store/types.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';
import { tempSqliteLog } from '../support/sqlite.ts';
import { Subscriber } from '../support/subscriber.ts';
import { eventStoreContract } from './event-store.contract.ts';
import { FakeKurrentServer } from './kurrentdb-fake.ts';
import { kurrentDbForTests } from './kurrentdb-server.ts';

eventStoreContract('memory', async (hooks) => {
  const store = new MemoryEventStore(hooks);
  return { store, concurrentTransactions: true, close: () => store.close() };
});

// One writer: a held append holds back every other append until it ends (reads go on).
eventStoreContract('sqlite', async (hooks) => {
  const log = await tempSqliteLog(hooks);
  return { store: log.store, concurrentTransactions: false, close: () => log.close() };
});

const database = await freshPostgresDatabase();
afterAll(async () => {
  await database?.drop();
});

describe.skipIf(database === undefined)(
  database ? 'postgres' : `postgres (skipped: ${postgresUnavailableReason})`,
  () => {
    eventStoreContract('postgres', async (hooks) => {
      const { store } = await openPostgresStore({ connectionString: database!.url, hooks });
      return { store, concurrentTransactions: true, close: () => store.close() };
    });

    describe('visibility held back by a transaction that sends no notification', () => {
      const cleanup: Array<() => Promise<unknown>> = [];
      afterEach(async () => {
        for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
      });

      it.each([
        ['the whole log', {}],
        ['some categories', { categories: ['held'] }],
      ])(
        'a live subscriber to %s still gets an event once an older, unrelated transaction ends',
        async (_, scope) => {
          // Two stores on one database, as two processes: `writer` appends, `reader` only hears NOTIFY.
          const { store: reader } = await openPostgresStore({ connectionString: database!.url });
          cleanup.push(() => reader.close());
          const { store: writer } = await openPostgresStore({ connectionString: database!.url });
          cleanup.push(() => writer.close());
          const other = new pg.Client({ connectionString: database!.url });
          await other.connect();
          cleanup.push(() => other.end());

          const subscriber = new Subscriber(reader, { ...scope, after: await reader.headPosition() });
          cleanup.push(() => subscriber.stop());
          await subscriber.waitForCaughtUp();

          // Any writing transaction older than the append holds back the snapshot xmin readers use.
          await other.query('BEGIN');
          await other.query('SELECT pg_current_xact_id()');

          // Wait until the reader has been woken by the append's NOTIFY and has read nothing: only
          // then is it certain that no notification is left to wake it again.
          const versionBefore = reader.changes.version;
          let sawHidden!: () => void;
          const hiddenSeen = new Promise<void>((resolve) => {
            sawHidden = resolve;
          });
          const readAll = reader.readAll.bind(reader);
          reader.readAll = async (options?: ReadAllOptions): Promise<StoredEvent[]> => {
            const woken = reader.changes.version > versionBefore;
            const rows = await readAll(options);
            if (woken && rows.length === 0) sawHidden();
            return rows;
          };

          const id = randomUUID();
          const result = await writer.append(`held-${randomUUID()}`, [{ id, type: 'Held', data: {} }], {
            metadata: { actor: 'system' },
          });
          await hiddenSeen;
          expect(subscriber.events).toEqual([]);
          expect(await reader.readAll({ after: result.position - 1 })).toEqual([]);

          // Ends without a NOTIFY (a rollback sends none), and nothing is appended after it.
          await other.query('ROLLBACK');
          await subscriber.waitForEvents([id]);
          expect(subscriber.events.map((e) => e.position)).toEqual([result.position]);
        },
      );
    });
  },
);

// KurrentDB: a real server (KURRENTDB_URL, or a testcontainers container), else reported as not run.
// Each store gets its own stream prefix, so a server that already holds events still starts empty.
const kurrent = await kurrentDbForTests();
afterAll(async () => {
  await kurrent.stop();
});

describe.skipIf(kurrent.url === undefined)(
  kurrent.url ? 'kurrentdb' : `kurrentdb (not run: ${kurrent.reason})`,
  () => {
    eventStoreContract(
      'kurrentdb',
      async () => {
        const store = await openKurrentDbStore({
          connectionString: kurrent.url!,
          streamPrefix: `contract-${randomUUID().slice(0, 8)}-`,
        });
        return { store, concurrentTransactions: true, close: () => store.close() };
      },
      { beforeCommitHook: false },
    );
  },
);

// Not KurrentDB: the adapter's own logic over an in-process fake of the client (see kurrentdb-fake.ts),
// once with the server's recognition of retried appends and once without (the adapter's checks alone).
for (const idempotentRetries of [true, false]) {
  eventStoreContract(
    `kurrentdb adapter over a fake client (no server; server-side retry detection ${idempotentRetries ? 'on' : 'off'})`,
    async () => {
      const store = new KurrentDbEventStore({
        client: new FakeKurrentServer({ idempotentRetries }).client(),
      });
      await store.start();
      return { store, concurrentTransactions: true, close: () => store.close() };
    },
    { beforeCommitHook: false },
  );
}
