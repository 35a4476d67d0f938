import { closeSync, openSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../../testing/wait.ts';
import { OTHER_COMMITS_SETTLE_MS } from '../change-notifier.ts';
import { subscribe } from '../subscription.ts';
import { EventLogStopped, isCaughtUp, type SubscriptionItem } from '../types.ts';
import { openSqliteLog } from './open.ts';
import { migrateSqlite } from './schema.ts';
import { SqliteEventStore } from './store.ts';
import { readWalIndex } from './wal-index.mjs';
import { WalSync } from './wal-sync.ts';
import { SqliteWriter } from './writer.ts';

const META = { actor: 'test' };
let dir: string;
let file: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'studio-sqlite-store-'));
  file = join(dir, 'log.sqlite');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the embedded store on SQLite', () => {
  it('commits the appends of one turn in one transaction, positions dense and in submission order', async () => {
    const log = openSqliteLog(file);
    // `data_version` moves once for each transaction another connection commits.
    const observer = new Database(file, { readonly: true });
    try {
      const commits = () => observer.pragma('data_version', { simple: true }) as number;
      const before = commits();
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          log.store.append(
            `s-${i}`,
            [{ type: 'One', data: { i } }, ...(i % 2 ? [{ type: 'Two', data: {} }] : [])],
            {
              expected: 'no_stream',
              metadata: META,
            },
          ),
        ),
      );
      expect(commits() - before).toBe(1);
      const all = await log.store.readAll();
      expect(all.map((e) => e.position)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
      expect(results.map((r) => r.position)).toEqual([1, 3, 4, 6, 7, 9, 10, 12, 13, 15]);
    } finally {
      observer.close();
      await log.close();
    }
  });

  it('answers whole-log reads with what it appended, exactly as a later start reads them back', async () => {
    const first = openSqliteLog(file);
    const awkward = { text: 'nul \u0000 and lone \ud800', nested: { z: 1, a: [1.5, null, true] }, é: 'ü' };
    await Promise.all([
      first.store.append(
        'a-1',
        [
          { type: 'One', data: { n: 1 } },
          { type: 'Two', data: awkward },
        ],
        { metadata: { actor: 'test', correlationId: 'c-1' } },
      ),
      first.store.append('b-1', [{ type: 'One', data: { n: 2 } }], { metadata: META }),
    ]);
    await first.store.append('a-1', [{ type: 'Two', data: [] }], { expected: 1, metadata: META });
    // An append refused stores nothing and leaves no trace in what is read back.
    await expect(
      first.store.append('a-1', [{ type: 'One', data: {} }], { expected: 0, metadata: META }),
    ).rejects.toThrow();
    const written = await first.store.readAll();
    await first.close();

    const again = openSqliteLog(file);
    try {
      const read = await again.store.readAll();
      expect(written).toEqual(read);
      expect(read.map((e) => [e.streamId, e.revision, e.type])).toEqual([
        ['a-1', 0, 'One'],
        ['a-1', 1, 'Two'],
        ['b-1', 0, 'One'],
        ['a-1', 2, 'Two'],
      ]);
      expect(read[1]?.data).toEqual(awkward);
      expect(read[0]?.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      // A start continues the log where it ended.
      expect(await again.store.headPosition()).toBe(4);
      const next = await again.store.append('b-1', [{ type: 'Two', data: {} }], {
        expected: 0,
        metadata: META,
      });
      expect(next).toEqual({ nextExpectedRevision: 1, position: 5 });
    } finally {
      await again.close();
    }
  });

  // Whether each commit is synced is told by the tests of a commit synced off the event loop (below)
  // and, through a gateway on a failing device, by test/cli/device-write-errors.test.ts.
  it('is in WAL mode, whichever sync level was chosen', async () => {
    for (const synchronous of ['full', 'normal'] as const) {
      const log = openSqliteLog(file, { synchronous });
      const look = new Database(file, { readonly: true });
      try {
        expect(look.pragma('journal_mode', { simple: true })).toBe('wal');
      } finally {
        look.close();
        await log.close();
      }
    }
  });

  describe('a commit synced off the event loop', () => {
    /** A store whose WAL syncs wait until the test lets them go (or fail, with `fail`). */
    function heldSyncs() {
      const writer = new Database(file);
      writer.pragma('journal_mode = WAL');
      writer.pragma('synchronous = normal');
      migrateSqlite(writer);
      const reader = new Database(file, { readonly: true });
      const wal = new WalSync(file);
      const held = { syncs: 0, release: () => {}, fail: (_: Error) => {} };
      const gate = {
        sync: async () => {
          held.syncs++;
          await new Promise<void>((resolve, reject) => {
            held.release = resolve;
            held.fail = reject;
          });
          await wal.sync();
        },
      };
      const store = new SqliteEventStore(new SqliteWriter(writer, undefined, gate), reader);
      const close = () => {
        wal.close();
        reader.close();
        writer.close();
      };
      return { store, held, close };
    }

    it('acknowledges a commit, and shows it to readers, only once the WAL is synced', async () => {
      const { store, held, close } = heldSyncs();
      const look = new Database(file, { readonly: true });
      try {
        let acknowledged = false;
        const append = store.append('s-1', [{ type: 'One', data: {} }], { metadata: META }).finally(() => {
          acknowledged = true;
        });
        await waitUntil(() => held.syncs === 1, 'the commit waits for its sync');
        // Committed (another connection sees it), yet neither acknowledged nor shown by the store.
        expect(look.prepare('SELECT count(*) FROM events').pluck().get()).toBe(1);
        expect(acknowledged).toBe(false);
        expect(await store.readStream('s-1')).toEqual([]);
        expect(await store.readAll({ types: ['One'] })).toEqual([]);
        expect(await store.headPosition()).toBe(0);
        held.release();
        expect(await append).toEqual({ nextExpectedRevision: 0, position: 1 });
        expect(await store.readStream('s-1')).toHaveLength(1);
        expect(await store.headPosition()).toBe(1);
      } finally {
        look.close();
        close();
      }
    });

    it('stops the log when a sync fails: the append is not acknowledged, and nothing is written after it', async () => {
      const { store, held, close } = heldSyncs();
      try {
        const append = store.append('s-1', [{ type: 'One', data: {} }], { metadata: META });
        await waitUntil(() => held.syncs === 1, 'the commit waits for its sync');
        held.fail(Object.assign(new Error('input/output error'), { code: 'EIO' }));
        await expect(append).rejects.toThrow(EventLogStopped);
        await expect(append).rejects.toThrow(/its WAL sync failed: EIO/);
        await expect(store.append('s-2', [{ type: 'One', data: {} }], { metadata: META })).rejects.toThrow(
          EventLogStopped,
        );
        expect(held.syncs).toBe(1);
      } finally {
        close();
      }
    });
  });

  it('copies the WAL into the file in its own thread once the WAL is large, then reuses the WAL from its start', async () => {
    const log = openSqliteLog(file, { checkpoints: { walBytes: 256 * 1024, pollMs: 10 } });
    try {
      const bulk = 'x'.repeat(8 * 1024);
      for (let i = 0; i < 64; i++)
        await log.store.append(`s-${i}`, [{ type: 'Bulk', data: { bulk } }], { metadata: META });
      await waitUntil(() => statSync(file).size > 512 * 1024, 'the file to hold what the WAL held');
      // Once a checkpoint has copied every frame, the next commit starts the WAL again from its
      // beginning, cut back to the size that triggers a checkpoint.
      let n = 0;
      await waitUntil(async () => {
        await log.store.append('after', [{ type: 'One', data: { n: n++ } }], { metadata: META });
        return statSync(`${file}-wal`).size <= 256 * 1024;
      }, 'the WAL to start again');
      expect(await log.store.readAll({ types: ['Bulk'] })).toHaveLength(64);
    } finally {
      await log.close();
    }
  });

  it('never copies the WAL on the thread that commits', async () => {
    // A WAL of 1 MiB before a checkpoint, and the thread's own checks never come.
    const log = openSqliteLog(file, { checkpoints: { walBytes: 1024 * 1024, pollMs: 60_000 } });
    try {
      const bulk = 'x'.repeat(8 * 1024);
      for (let i = 0; i < 20; i++)
        await log.store.append(`s-${i}`, [{ type: 'Bulk', data: { bulk } }], { metadata: META });
      expect(statSync(`${file}-wal`).size).toBeGreaterThan(256 * 1024);
      expect(statSync(file).size).toBeLessThan(64 * 1024);
    } finally {
      await log.close();
    }
    // Closed: the last connection folded the WAL into the file.
    expect(statSync(file).size).toBeGreaterThan(160 * 1024);
  });

  it('keeps the WAL within its size under commits that never pause: past 5/8 of it they wait for a checkpoint', async () => {
    // The thread's own checks never come: only the bound makes checkpoints here.
    const log = openSqliteLog(file, { checkpoints: { walBytes: 256 * 1024, pollMs: 60_000 } });
    const index = openSync(`${file}-shm`, 'r');
    try {
      const bulk = 'x'.repeat(8 * 1024);
      let largest = 0;
      let restarts = 0;
      let frames = 0;
      for (let i = 0; i < 300; i++) {
        await log.store.append(`s-${i}`, [{ type: 'Bulk', data: { bulk } }], { metadata: META });
        const now = readWalIndex(index).frames;
        if (now < frames) restarts++;
        frames = now;
        // From its first start again on: the file is then cut back to its size.
        if (restarts > 0) largest = Math.max(largest, statSync(`${file}-wal`).size);
      }
      expect(statSync(file).size).toBeGreaterThan(1024 * 1024);
      // It starts again from its beginning within the file kept, so no room is made past it.
      expect(largest).toBe(256 * 1024);
      expect(restarts).toBeGreaterThanOrEqual(10);
      expect(await log.store.readAll({ types: ['Bulk'] })).toHaveLength(300);
    } finally {
      closeSync(index);
      await log.close();
    }
  });

  it('wakes a subscription to some categories for theirs at once, for the others once they settle', async () => {
    const log = openSqliteLog(file);
    const controller = new AbortController();
    const items: SubscriptionItem[] = [];
    const following = (async () => {
      for await (const item of subscribe(log.store, { signal: controller.signal, categories: ['session'] }))
        items.push(item);
    })();
    try {
      await waitUntil(() => items.length === 1, 'the first $caught_up');
      // Twenty commits of generations, one after the other: a wake per settle period at most, not
      // one per commit (a single wake where twenty commits take less than a period).
      const started = performance.now();
      for (let i = 0; i < 20; i++)
        await log.store.append('usage-acme', [{ type: 'GenerationCompleted', data: { i } }], {
          metadata: META,
        });
      const head = await log.store.headPosition();
      await waitUntil(() => items.some((item) => isCaughtUp(item) && item.position === head), 'passing them');
      const periods = Math.floor((performance.now() - started) / OTHER_COMMITS_SETTLE_MS);
      // The first marker came before the commits; one more allows for the timers' rounding.
      expect(items.filter(isCaughtUp).length).toBeLessThanOrEqual(2 + periods);
      expect(items.every(isCaughtUp)).toBe(true);
      const turn = await log.store.append('session-ses_1', [{ type: 'SessionCreated', data: {} }], {
        metadata: META,
      });
      await waitUntil(
        () => items.some((item) => !isCaughtUp(item) && item.position === turn.position),
        'the turn',
      );
    } finally {
      controller.abort();
      await following;
      await log.close();
    }
  });

  it('refuses a log written by a newer Studio, saying so', async () => {
    const db = new Database(file);
    db.pragma('user_version = 99');
    db.close();
    expect(() => openSqliteLog(file)).toThrow(/written by a newer Studio \(schema 99/);
  });
});
