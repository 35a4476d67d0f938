import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../shared/event-store/postgres.ts';
import type { SqlEventStore } from '../../shared/event-store/sql-store.ts';
import { subscribe } from '../../shared/event-store/subscription.ts';
import type { StoredEvent } from '../../shared/event-store/types.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';

const database = await freshPostgresDatabase();
const stores: SqlEventStore[] = [];
afterAll(async () => {
  for (const store of stores) await store.close();
  await database?.drop();
});

/**
 * A subscriber on PostgreSQL wakes once per commit of its own process (the store wakes it when the
 * commit returns; the notification of that commit coming back is passed over), and still wakes for
 * every commit of another process, which only the notification tells it about.
 */
describe.skipIf(database === undefined)(
  database ? 'postgres: subscribers woken' : `postgres (skipped: ${postgresUnavailableReason})`,
  () => {
    it("reads once per own commit, and wakes for another process's", async () => {
      let reads = 0;
      const { store } = await openPostgresStore({
        connectionString: database!.url,
        hooks: {
          beforeRead: async (read) => {
            if (read.kind === 'readAll') reads++;
          },
        },
      });
      const { store: other } = await openPostgresStore({ connectionString: database!.url });
      stores.push(store, other);

      const seen: StoredEvent[] = [];
      const stop = new AbortController();
      let caughtUp = false;
      const following = (async () => {
        for await (const item of subscribe(store, { signal: stop.signal })) {
          if (item.type === '$caught_up') caughtUp = true;
          else seen.push(item as StoredEvent);
        }
      })();
      await waitUntil(() => caughtUp, 'caught up');

      const append = (on: SqlEventStore, n: number) =>
        on.append(`wake-${n}`, [{ type: 'Thing', data: { n } }], {
          expected: 'no_stream',
          metadata: { actor: 'system' },
        });
      // Reads per own commit. A transaction open elsewhere on the cluster (another suite's) can hold
      // an event back for a moment, and the subscriber reads again until it shows: so not every
      // commit costs exactly one read, but the notification's echo would cost every commit a second.
      const readsPerCommit: number[] = [];
      for (let n = 1; n <= 5; n++) {
        const before = reads;
        await append(store, n);
        await waitUntil(() => seen.length === n, `own event ${n} seen`);
        await sleep(100); // the commit's notification has come back by now
        readsPerCommit.push(reads - before);
      }
      expect(Math.min(...readsPerCommit), `reads per own commit: ${readsPerCommit.join(', ')}`).toBe(1);
      for (let n = 6; n <= 8; n++) {
        await append(other, n);
        await waitUntil(() => seen.length === n, `the other process's event ${n} seen`);
      }
      expect(seen.map((e) => e.data)).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((n) => ({ n })));
      stop.abort();
      await following;
    });

    // pg 8 queues a query sent to a connection still running another, with a deprecation warning;
    // pg 9 will refuse it. Asking a new connection its backend id must come before it is handed out.
    it('sends no query to a connection still running another', async () => {
      const warnings: string[] = [];
      const onWarning = (warning: Error) => warnings.push(warning.message);
      process.on('warning', onWarning);
      try {
        const { store } = await openPostgresStore({ connectionString: database!.url, poolSize: 8 });
        stores.push(store);
        // Sixteen reads at once: the pool opens a connection for each of the first eight.
        await Promise.all(Array.from({ length: 16 }, () => store.readStream('wake-1')));
        await sleep(10); // warnings are emitted on the next tick
      } finally {
        process.off('warning', onWarning);
      }
      expect(warnings.filter((message) => message.includes('already executing a query'))).toEqual([]);
    });
  },
);
