import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import {
  COUNTERS_TABLE,
  type CounterStore,
  memoryCounters,
  postgresCounters,
} from '../../shared/rate-limit/counters.ts';
import { LEASES_TABLE } from '../../shared/rate-limit/leases.ts';
import { redisCounters } from '../../shared/rate-limit/redis-counters.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';
import { reachableRedis, redisUnavailableReason } from '../support/redis.ts';

// Leases of generations in flight, on every counter store: at most `max` held at once per key,
// also when two processes (two stores on one database) take them at the same instant; a lease
// that is not renewed runs out, so a process that died gives its slots back.

const database = await freshPostgresDatabase();
const redisUrl = await reachableRedis();

interface Kind {
  name: string;
  skip?: string;
  /** Two stores over the same place, as two gateway processes would hold them. */
  open(): Promise<[CounterStore, CounterStore]>;
}

const memory = memoryCounters();
const KINDS: Kind[] = [
  { name: 'memory', open: async () => [memory, memory] },
  {
    name: 'postgres',
    skip: database ? undefined : postgresUnavailableReason,
    open: async () => [await postgresCounters(database!.url), await postgresCounters(database!.url)],
  },
  {
    name: 'redis',
    skip: redisUrl ? undefined : redisUnavailableReason,
    open: async () => [await redisCounters(redisUrl!), await redisCounters(redisUrl!)],
  },
];

const opened: CounterStore[] = [];
afterAll(async () => {
  for (const store of new Set(opened)) await store.close();
  await database?.drop();
});

describe.each(KINDS)('leases on $name', (kind) => {
  const run = kind.skip ? it.skip : it;
  const stores = async () => {
    const pair = await kind.open();
    opened.push(...pair);
    return pair;
  };
  const key = () => `test-in-flight:${randomUUID()}`;

  run('hands out at most max slots to requests racing from two processes', async () => {
    const [a, b] = await stores();
    const k = key();
    const taken = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).leases.acquire(k, `lease-${i}`, 3, 10_000)),
    );
    expect(taken.filter(Boolean)).toHaveLength(3);
  });

  run('a released slot can be taken again, from the other process too', async () => {
    const [a, b] = await stores();
    const k = key();
    expect(await a.leases.acquire(k, 'one', 1, 10_000)).toBe(true);
    expect(await b.leases.acquire(k, 'two', 1, 10_000)).toBe(false);
    await a.leases.release(k, 'one');
    expect(await b.leases.acquire(k, 'two', 1, 10_000)).toBe(true);
  });

  run('a lease not renewed runs out; a renewed one holds', async () => {
    const [a, b] = await stores();
    const lapsing = key();
    const renewed = key();
    expect(await a.leases.acquire(lapsing, 'dead', 1, 50)).toBe(true);
    expect(await a.leases.acquire(renewed, 'alive', 1, 50)).toBe(true);
    await a.leases.renew(renewed, 'alive', 60_000);
    await sleep(150);
    expect(await b.leases.acquire(lapsing, 'next', 1, 10_000)).toBe(true);
    expect(await b.leases.acquire(renewed, 'next', 1, 10_000)).toBe(false);
  });
});

describe('REDIS_URL that no Redis answers', () => {
  it('fails the start with the address named and its password masked', async () => {
    await expect(redisCounters('redis://:hunter2-secret@127.0.0.1:1/0')).rejects.toThrow(
      /^Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1\/0 cannot be reached \(ECONNREFUSED\)$/,
    );
  });
});

describe('PostgreSQL counters opened by several processes at once', () => {
  it.skipIf(!database)('every one starts: the tables are made once, under a lock', async () => {
    const fresh = await freshPostgresDatabase();
    try {
      const stores = await Promise.all(Array.from({ length: 6 }, () => postgresCounters(fresh!.url)));
      // Each works on the same tables: one lease of one taken, the second refused, by another process.
      expect(await stores[0]!.leases.acquire('k', 'a', 1, 60_000)).toBe(true);
      expect(await stores[5]!.leases.acquire('k', 'b', 1, 60_000)).toBe(false);
      for (const store of stores) await store.close();
    } finally {
      await fresh?.drop();
    }
  });
});

describe('PostgreSQL leases', () => {
  it.skipIf(!database)('a taker waits for one under way, then counts the lease it committed', async () => {
    const [store] = await KINDS[1]!.open();
    opened.push(store);
    const { default: pg } = await import('pg');
    const other = new pg.Client({ connectionString: database!.url });
    await other.connect();
    try {
      const k = `test-in-flight:${randomUUID()}`;
      // Another process takes the only slot in a transaction it has not committed yet.
      await other.query('BEGIN');
      await other.query('SELECT studio_rate_leases_acquire($1, $2, 1, $3, $4)', [
        k,
        'first',
        Date.now(),
        Date.now() + 60_000,
      ]);
      let settled = false;
      const second = store.leases.acquire(k, 'second', 1, 60_000).finally(() => {
        settled = true;
      });
      await sleep(200);
      expect(settled).toBe(false); // it waits on the key's lock instead of counting without the first
      await other.query('COMMIT');
      expect(await second).toBe(false);
    } finally {
      await other.end();
    }
  });

  it.skipIf(!database)(
    'keeps counters and leases in unlogged tables, also those an earlier version made logged',
    async () => {
      const own = await freshPostgresDatabase();
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: own!.url });
      await client.connect();
      const stores: CounterStore[] = [];
      try {
        // The tables as they were made before: ordinary tables, a counter already in one.
        await client.query(
          `CREATE TABLE ${COUNTERS_TABLE} (key varchar(255) PRIMARY KEY, points integer NOT NULL DEFAULT 0, expire bigint)`,
        );
        await client.query(
          `CREATE TABLE ${LEASES_TABLE} (key varchar(255) NOT NULL, lease_id varchar(64) NOT NULL, expires_at bigint NOT NULL, PRIMARY KEY (key, lease_id))`,
        );
        await client.query(`INSERT INTO ${COUNTERS_TABLE} VALUES ('kept', 7, NULL)`);
        const persistence = async () =>
          (
            await client.query<{ relname: string; relpersistence: string }>(
              'SELECT relname, relpersistence FROM pg_class WHERE relname = ANY($1) ORDER BY relname',
              [[COUNTERS_TABLE, LEASES_TABLE]],
            )
          ).rows.map((row) => `${row.relname}:${row.relpersistence}`);
        expect(await persistence()).toEqual([`${LEASES_TABLE}:p`, `${COUNTERS_TABLE}:p`]);

        for (let start = 0; start < 2; start++) {
          stores.push(await postgresCounters(own!.url));
          expect(await persistence()).toEqual([`${LEASES_TABLE}:u`, `${COUNTERS_TABLE}:u`]);
        }
        const kept = await client.query(`SELECT points FROM ${COUNTERS_TABLE} WHERE key = 'kept'`);
        expect(kept.rows).toEqual([{ points: 7 }]);
      } finally {
        await client.end();
        for (const store of stores) await store.close();
        await own!.drop();
      }
    },
  );
});
