import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../shared/event-store/postgres.ts';
import type { SqlEventStore } from '../../shared/event-store/sql-store.ts';
import { DuplicateEventId, type EventMetadata } from '../../shared/event-store/types.ts';
import { waitUntil } from '../../shared/testing/wait.ts';
import { CommitGate } from '../support/commit-gate.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';

const META: EventMetadata = { actor: 'system' };
/** Positions are (transaction id << 16) + index: the transaction an event was committed in. */
const transactionOf = (position: number) => Math.floor(position / 65_536);
const thing = () => ({ id: randomUUID(), type: 'Thing', data: {} });

/** Until a backend of the database waits for a lock (here: the loser's insert of the contested id). */
async function waitForALockWait(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await waitUntil(async () => {
      const { rows } = await client.query<{ waiting: number }>(
        "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      return (rows[0]?.waiting ?? 0) > 0;
    }, 'a backend waits for a lock');
  } finally {
    await client.end();
  }
}

function groupCommitSuite(name: string, open: () => Promise<SqlEventStore>): void {
  describe(`group commit: ${name}`, () => {
    let store: SqlEventStore;
    afterAll(async () => {
      await store?.close();
    });

    it('appends to different streams submitted together share one transaction, in submission order', async () => {
      store = await open();
      const streams = Array.from({ length: 10 }, () => `gc-${randomUUID()}`);
      const results = await Promise.all(
        streams.map((s, i) =>
          store.append(s, i % 2 ? [thing(), thing()] : [thing()], { expected: 'no_stream', metadata: META }),
        ),
      );
      const transactions = new Set(results.map((r) => transactionOf(r.position)));
      expect(transactions.size).toBe(1);
      const stored = await Promise.all(streams.map((s) => store.readStream(s)));
      const positions = stored.flat().map((e) => e.position);
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
      expect(new Set(positions).size).toBe(15);
    });
  });
}

const database = await freshPostgresDatabase();
afterAll(async () => {
  await database?.drop();
});

describe.skipIf(database === undefined)(
  database ? 'postgres' : `postgres (skipped: ${postgresUnavailableReason})`,
  () => {
    groupCommitSuite(
      'postgres',
      async () => (await openPostgresStore({ connectionString: database!.url })).store,
    );

    it('a batch that loses an event id race to another process still stores its other appends', async () => {
      const gate = new CommitGate();
      const { store: first } = await openPostgresStore({
        connectionString: database!.url,
        hooks: gate.hooks,
      });
      const { store: second } = await openPostgresStore({ connectionString: database!.url });
      try {
        const contested = thing();
        const held = `race-held-${randomUUID()}`;
        const hold = gate.hold(held);
        // The first process has inserted the id and holds its transaction open.
        const winner = first.append(held, [contested], { metadata: META });
        await hold.entered;
        // The second process's batch carries the same id and an unrelated append: its insert of the
        // id waits for the first transaction, and fails when that commits.
        const loser = `race-loser-${randomUUID()}`;
        const bystander = `race-bystander-${randomUUID()}`;
        const bystanderEvent = thing();
        const outcomes = Promise.allSettled([
          second.append(loser, [contested], { metadata: META }),
          second.append(bystander, [bystanderEvent], { expected: 'no_stream', metadata: META }),
        ]);
        await waitForALockWait(database!.url);
        hold.release();
        await winner;
        const [lost, kept] = await outcomes;
        expect(lost.status === 'rejected' && lost.reason).toBeInstanceOf(DuplicateEventId);
        expect(kept).toMatchObject({ status: 'fulfilled', value: { nextExpectedRevision: 0 } });
        expect((await second.readStream(bystander)).map((e) => e.id)).toEqual([bystanderEvent.id]);
        expect(await second.readStream(loser)).toEqual([]);
      } finally {
        await first.close();
        await second.close();
      }
    });
  },
);
