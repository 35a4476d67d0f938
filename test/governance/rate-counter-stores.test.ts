import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import type { Admission } from '../../shared/rate-limit/admissions.ts';
import { type CounterStore, memoryCounters, postgresCounters } from '../../shared/rate-limit/counters.ts';
import { COUNTERS_TABLE, LEASES_TABLE } from '../../shared/rate-limit/postgres-admissions.ts';
import { redisCounters } from '../../shared/rate-limit/redis-counters.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';
import { reachableRedis, redisUnavailableReason } from '../support/redis.ts';

// Generations' admissions on every counter store: counts in a fixed window, refused past their
// limit and then not counted; slots held at most `max` at once per key, also when two processes
// (two stores on one database) take them at the same instant; all or nothing; a lease that is
// not renewed runs out, so a process that died gives its slots back.

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

const WINDOW_MS = 60_000;
const ask = (over: Partial<Admission>): Admission => ({
  requests: [],
  tokens: [],
  slots: [],
  leaseId: randomUUID(),
  leaseMs: 10_000,
  windowMs: WINDOW_MS,
  ...over,
});
/** Takes one of `max` slots of `key` as lease `leaseId`: whether it was let through. */
const takeSlot = async (store: CounterStore, key: string, leaseId: string, max: number, leaseMs = 10_000) =>
  (await store.admissions.admit(ask({ slots: [{ key, max }], leaseId, leaseMs }))).admitted;
const giveBack = (store: CounterStore, key: string, leaseId: string) =>
  store.admissions.settle({ slots: [key], leaseId, tokens: [], windowMs: WINDOW_MS });

describe.each(KINDS)('admissions on $name', (kind) => {
  const run = kind.skip ? it.skip : it;
  const stores = async () => {
    const pair = await kind.open();
    opened.push(...pair);
    return pair;
  };
  const key = () => `test:${randomUUID()}`;

  run('hands out at most max slots to requests racing from two processes', async () => {
    const [a, b] = await stores();
    const k = key();
    const taken = await Promise.all(
      Array.from({ length: 20 }, (_, i) => takeSlot(i % 2 ? a : b, k, `lease-${i}`, 3)),
    );
    expect(taken.filter(Boolean)).toHaveLength(3);
  });

  run('a slot given back can be taken again, from the other process too', async () => {
    const [a, b] = await stores();
    const k = key();
    expect(await takeSlot(a, k, 'one', 1)).toBe(true);
    expect(await takeSlot(b, k, 'two', 1)).toBe(false);
    await giveBack(a, k, 'one');
    expect(await takeSlot(b, k, 'two', 1)).toBe(true);
  });

  run('a lease not renewed runs out; a renewed one holds', async () => {
    const [a, b] = await stores();
    const lapsing = key();
    const renewed = key();
    expect(await takeSlot(a, lapsing, 'dead', 1, 50)).toBe(true);
    expect(await takeSlot(a, renewed, 'alive', 1, 50)).toBe(true);
    await a.admissions.renew([renewed], 'alive', 60_000);
    await sleep(150);
    expect(await takeSlot(b, lapsing, 'next', 1)).toBe(true);
    expect(await takeSlot(b, renewed, 'next', 1)).toBe(false);
  });

  run(
    'counts requests in a fixed window shared by both processes; a refused one is not counted',
    async () => {
      const [a, b] = await stores();
      const requests = [{ key: key(), limit: 2 }];
      const first = await a.admissions.admit(ask({ requests, windowMs: 300 }));
      expect(first).toMatchObject({ admitted: true, requests: [{ used: 1 }] });
      expect(first.requests[0]!.resetMs).toBeGreaterThan(200);
      expect(first.requests[0]!.resetMs).toBeLessThanOrEqual(300);
      expect(await b.admissions.admit(ask({ requests, windowMs: 300 }))).toMatchObject({
        admitted: true,
        requests: [{ used: 2 }],
      });
      for (let i = 0; i < 2; i++)
        expect(await a.admissions.admit(ask({ requests, windowMs: 300 }))).toMatchObject({
          admitted: false,
          requests: [{ used: 2 }],
        });
      await sleep(350); // a new window
      expect(await b.admissions.admit(ask({ requests, windowMs: 300 }))).toMatchObject({
        admitted: true,
        requests: [{ used: 1 }],
      });
    },
  );

  run('refused for a full slot, a generation takes back its counts and no other slot', async () => {
    const [a, b] = await stores();
    const requests = [{ key: key(), limit: 10 }];
    const free = key();
    const busy = key();
    expect(await takeSlot(a, busy, 'holder', 1)).toBe(true);
    const refused = await b.admissions.admit(
      ask({
        requests,
        slots: [
          { key: free, max: 1 },
          { key: busy, max: 1 },
        ],
      }),
    );
    expect(refused).toMatchObject({ admitted: false, requests: [{ used: 0 }], full: [false, true] });
    expect(await takeSlot(a, free, 'other', 1)).toBe(true); // the free key's slot was not kept
    expect(await a.admissions.admit(ask({ requests }))).toMatchObject({
      admitted: true,
      requests: [{ used: 1 }],
    });
  });

  run('tokens charged when generations end refuse the next once they reach the limit', async () => {
    const [a, b] = await stores();
    const tokens = [{ key: key(), limit: 100 }];
    const slot = key();
    const first = await a.admissions.admit(ask({ tokens, slots: [{ key: slot, max: 5 }], leaseId: 'first' }));
    expect(first).toMatchObject({ admitted: true, tokens: [{ used: 0 }], full: [false] });
    await a.admissions.settle({
      slots: [slot],
      leaseId: 'first',
      tokens: [{ key: tokens[0]!.key, charge: 60 }],
      windowMs: WINDOW_MS,
    });
    expect(await b.admissions.admit(ask({ tokens }))).toMatchObject({
      admitted: true,
      tokens: [{ used: 60 }],
    });
    await b.admissions.settle({
      slots: [],
      leaseId: 'x',
      tokens: [{ key: tokens[0]!.key, charge: 45 }],
      windowMs: WINDOW_MS,
    });
    const refused = await a.admissions.admit(ask({ tokens, slots: [{ key: slot, max: 1 }] }));
    expect(refused).toMatchObject({ admitted: false, tokens: [{ used: 105 }], full: [false] });
    expect(refused.tokens[0]!.resetMs).toBeGreaterThan(WINDOW_MS - 10_000);
    // The slot was not looked at, let alone taken: the first lease was given back, so one is free.
    expect(await takeSlot(b, slot, 'after', 1)).toBe(true);
  });

  run('a count given back below nothing stays at 0: the next window lends no attempt', async () => {
    const [a, b] = await stores();
    const requests = [{ key: key(), limit: 1 }];
    await a.admissions.settle({
      slots: [],
      leaseId: 'x',
      tokens: [{ key: requests[0]!.key, charge: -1 }],
      windowMs: WINDOW_MS,
    });
    expect(await b.admissions.admit(ask({ requests }))).toMatchObject({
      admitted: true,
      requests: [{ used: 1 }],
    });
    expect(await a.admissions.admit(ask({ requests }))).toMatchObject({
      admitted: false,
      requests: [{ used: 1 }],
    });
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
      // Each works on the same tables: one slot of one taken, the second refused, by another process.
      expect(await takeSlot(stores[0]!, 'k', 'a', 1)).toBe(true);
      expect(await takeSlot(stores[5]!, 'k', 'b', 1)).toBe(false);
      for (const store of stores) await store.close();
    } finally {
      await fresh?.drop();
    }
  });
});

describe('PostgreSQL admissions', () => {
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
      await other.query(
        "SELECT * FROM studio_rate_admit('{}', '{}', '{}', '{}', ARRAY[$1::varchar], '{1}', 'first', 60000, $2, 60000)",
        [k, Date.now()],
      );
      let settled = false;
      const second = takeSlot(store, k, 'second', 1).finally(() => {
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
    'admits and settles through the indexes, however many rows came and went',
    async () => {
      const own = await freshPostgresDatabase();
      const store = await postgresCounters(own!.url);
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: own!.url });
      await client.connect();
      try {
        const generations = 300;
        for (let i = 0; i < generations; i++) {
          const leaseId = `lease-${i}`;
          const slots = [{ key: `slot-${i % 3}`, max: 10 }];
          await store.admissions.admit(ask({ requests: [{ key: 'r', limit: 1_000 }], slots, leaseId }));
          await store.admissions.settle({ slots: [slots[0]!.key], leaseId, tokens: [], windowMs: WINDOW_MS });
        }
        const scans = async () =>
          (
            await client.query<{ deleted: string; seq: string }>(
              'SELECT n_tup_del AS deleted, seq_scan AS seq FROM pg_stat_user_tables WHERE relname = $1',
              [LEASES_TABLE],
            )
          ).rows[0];
        await store.close(); // its connections' statistics reach the view as they end
        await waitUntil(
          async () => Number((await scans())?.deleted ?? 0) >= generations,
          'the deletes counted',
        );
        // A plan cached with the table empty would scan it at every call: hundreds. The hourly sweep's
        // delete by expiry, at start, is the only sequential scan.
        expect(Number((await scans())!.seq)).toBeLessThan(5);
      } finally {
        await client.end();
        await store.close().catch(() => undefined);
        await own!.drop();
      }
    },
  );

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
