import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SEALS_STREAM } from '../../services/audit/seal.ts';
import { LogSealer } from '../../services/audit/sealer.ts';
import { verifyLog } from '../../services/audit/verify.ts';
import { KurrentDbEventStore } from '../../shared/event-store/kurrentdb/store.ts';
import { lastEventOf } from '../../shared/event-store/last-event.ts';
import { MemoryEventStore } from '../../shared/event-store/memory.ts';
import { openPostgresStore } from '../../shared/event-store/postgres.ts';
import type { EventStore } from '../../shared/event-store/types.ts';
import { createLogger } from '../../shared/logger.ts';
import { FakeKurrentServer } from '../contract/kurrentdb-fake.ts';
import { freshPostgresDatabase } from '../support/postgres.ts';
import { tempSqliteLog } from '../support/sqlite.ts';
import { untilSealed } from './until-sealed.ts';

// The sealer and verify use the store's port only: the same log is sealed and verified on every adapter.

const database = await freshPostgresDatabase();
const tempDirs: string[] = [];
afterAll(async () => {
  await database?.drop();
  await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

type OpenStore = readonly [name: string, open: () => Promise<EventStore>];

const STORES: OpenStore[] = [
  ['memory', async () => new MemoryEventStore()],
  [
    'sqlite',
    async () => {
      const log = await tempSqliteLog();
      tempDirs.push(dirname(log.file));
      return log.store;
    },
  ],
  [
    'kurrentdb adapter over a fake client',
    async () => {
      const store = new KurrentDbEventStore({
        client: new FakeKurrentServer({ idempotentRetries: true }).client(),
      });
      await store.start();
      return store;
    },
  ],
  ...(database
    ? [
        [
          'postgres',
          async () => (await openPostgresStore({ connectionString: database.url })).store,
        ] satisfies OpenStore,
      ]
    : []),
];

describe.each(STORES)('sealing and verifying on %s', (_name, open) => {
  it('seals every event in chained ranges and verifies them all', { timeout: 30_000 }, async () => {
    const store = await open();
    const controller = new AbortController();
    const sealer = new LogSealer({
      events: store,
      logger: createLogger('silent'),
      sealEvery: 4,
      sealAfterMs: 20,
    });
    const running = sealer.run(controller.signal);
    try {
      let written = 0;
      for (let i = 0; i < 10; i++) {
        const data = { zz: i, a: { long_key: [i, { y: null, b: 'é' }], k: true } };
        ({ position: written } = await store.append(`studio-s${i % 3}`, [{ type: 'Noted', data }], {
          metadata: { actor: 'admin' },
        }));
      }
      await untilSealed(store, written);
      const report = await verifyLog(store);
      expect(report).toMatchObject({ ok: true, events_checked: 10, unsealed: 0, breaks: 0 });
      expect(report.seals_checked).toBeGreaterThanOrEqual(3);
      expect((await lastEventOf(store, SEALS_STREAM))?.revision).toBe(report.seals_checked - 1);
    } finally {
      controller.abort();
      await running;
      await store.close();
    }
  });
});
