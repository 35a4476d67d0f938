import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toJsonbText } from '../../shared/event-store/json-codec.ts';
import { migrate } from '../../shared/event-store/migrations.ts';
import { openPostgresStore } from '../../shared/event-store/postgres.ts';
import { openSqliteLog } from '../../shared/event-store/sqlite/open.ts';
import {
  type CheckpointStore,
  MemoryCheckpointStore,
  SerializedSnapshot,
  SqlCheckpointStore,
} from '../../shared/projections/checkpoints.ts';
import { freshPostgresDatabase, postgresUnavailableReason } from '../support/postgres.ts';
import { tempSqliteLog } from '../support/sqlite.ts';

const database = await freshPostgresDatabase();
afterAll(async () => {
  await database?.drop();
});

// A read model's snapshot holds whatever text events carried: NUL and lone surrogates included.
const awkward = ['\u0000', '\ud800', '\udc00x', '\\u0000', 'a\u0000b\ud800'];
const snapshots: unknown[] = [
  { studios: Object.fromEntries(awkward.map((name, i) => [`s${i}${name}`, { name, tags: awkward }])) },
  awkward,
  { plain: 'text', n: 1 },
  { $studio_json: '{"a":1}' },
  { $studio_json: '\u0000' },
];

/** Opens the store once for the suite, then checks every snapshot. */
function snapshotCases(open: () => Promise<{ checkpoints: CheckpointStore; close(): Promise<void> }>) {
  let target: Awaited<ReturnType<typeof open>> | undefined;
  beforeAll(async () => {
    target = await open();
  });
  afterAll(async () => {
    await target?.close();
  });

  it('a snapshot comes back identical, whatever text it holds', async () => {
    const { checkpoints } = target!;
    for (const [index, state] of snapshots.entries()) {
      const name = `projection-${index}`;
      await checkpoints.save(name, { schemaVersion: 1, position: 10 + index, state });
      expect(await checkpoints.load(name)).toEqual({ schemaVersion: 1, position: 10 + index, state });
      await checkpoints.save(name, { schemaVersion: 2, position: 20 + index, state: { again: state } });
      expect(await checkpoints.load(name)).toEqual({
        schemaVersion: 2,
        position: 20 + index,
        state: { again: state },
      });
      // Serialized ahead of `save` (over several turns, as the runner does for a large read model).
      await checkpoints.save(name, {
        schemaVersion: 3,
        position: 30 + index,
        state: new SerializedSnapshot(['[', JSON.stringify(state), ']']),
      });
      expect(await checkpoints.load(name)).toEqual({
        schemaVersion: 3,
        position: 30 + index,
        state: [state],
      });
    }
  });
}

describe('checkpoints saved in one turn', () => {
  it('go to the database in one transaction, the later of two saves of a name winning', async () => {
    const log = await tempSqliteLog();
    const observer = new Database(log.file, { readonly: true });
    try {
      // `data_version` moves once for each transaction another connection commits.
      const commits = () => observer.pragma('data_version', { simple: true }) as number;
      const before = commits();
      const names = Array.from({ length: 12 }, (_, i) => `read-model-${i}`);
      await Promise.all([
        ...names.map((name, i) =>
          log.checkpoints.save(name, { schemaVersion: 1, position: i, state: { i } }),
        ),
        log.checkpoints.save('read-model-0', { schemaVersion: 2, position: 99, state: { again: true } }),
      ]);
      expect(commits() - before).toBe(1);
      expect(await log.checkpoints.load('read-model-0')).toEqual({
        schemaVersion: 2,
        position: 99,
        state: { again: true },
      });
      expect(await log.checkpoints.load('read-model-11')).toEqual({
        schemaVersion: 1,
        position: 11,
        state: { i: 11 },
      });
    } finally {
      observer.close();
      await log.close();
    }
  });
});

describe('large snapshots on SQLite', () => {
  const large = {
    rows: Array.from({ length: 3_000 }, (_, i) => ({ id: `request-${i}`, note: 'é \u0000 \ud800' })),
  };

  it('are stored deflated and come back identical', async () => {
    const log = await tempSqliteLog();
    const observer = new Database(log.file, { readonly: true });
    try {
      await log.checkpoints.save('requests', { schemaVersion: 1, position: 7, state: large });
      await log.checkpoints.save('small', { schemaVersion: 1, position: 7, state: { a: 1 } });
      const stored = (name: string) =>
        observer
          .prepare(
            'SELECT typeof(state) AS text, length(state_deflated) AS deflated FROM projection_checkpoints WHERE name = ?',
          )
          .get(name);
      expect(stored('requests')).toMatchObject({ text: 'null' });
      expect((stored('requests') as { deflated: number }).deflated).toBeLessThan(
        JSON.stringify(large).length / 4,
      );
      expect(stored('small')).toEqual({ text: 'text', deflated: null });
      expect(await log.checkpoints.load('requests')).toEqual({ schemaVersion: 1, position: 7, state: large });
    } finally {
      observer.close();
      await log.close();
    }
  });

  it('a later save of the same name wins over a large one still being deflated', async () => {
    const log = await tempSqliteLog();
    try {
      await Promise.all([
        log.checkpoints.save('requests', { schemaVersion: 1, position: 7, state: large }),
        log.checkpoints.save('requests', { schemaVersion: 1, position: 8, state: { rows: [] } }),
      ]);
      expect(await log.checkpoints.load('requests')).toEqual({
        schemaVersion: 1,
        position: 8,
        state: { rows: [] },
      });
    } finally {
      await log.close();
    }
  });

  it('a log from before deflated snapshots opens, its snapshots as they were', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'studio-sqlite-earlier-'));
    try {
      // The first schema, as an earlier version left it.
      const earlier = new Database(join(dir, 'log.sqlite'));
      earlier.exec(`CREATE TABLE events (position INTEGER PRIMARY KEY, stream_id TEXT NOT NULL, revision INTEGER NOT NULL,
          event_id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL,
          created_at TEXT NOT NULL) STRICT;
        CREATE UNIQUE INDEX events_stream_revision ON events (stream_id, revision);
        CREATE INDEX events_type_position ON events (type, position);
        CREATE TABLE projection_checkpoints (name TEXT PRIMARY KEY, version INTEGER NOT NULL,
          position INTEGER NOT NULL, state TEXT, updated_at TEXT NOT NULL) STRICT;
        INSERT INTO projection_checkpoints VALUES ('studios', 1, 3, '{"a":"b"}', '2026-11-01T00:00:00.000Z');`);
      earlier.pragma('user_version = 1');
      earlier.close();
      const reopened = openSqliteLog(join(dir, 'log.sqlite'));
      try {
        expect(await reopened.checkpoints.load('studios')).toEqual({
          schemaVersion: 1,
          position: 3,
          state: { a: 'b' },
        });
        await reopened.checkpoints.save('requests', { schemaVersion: 1, position: 4, state: large });
        expect(await reopened.checkpoints.load('requests')).toEqual({
          schemaVersion: 1,
          position: 4,
          state: large,
        });
      } finally {
        await reopened.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('checkpoints in memory', () => {
  snapshotCases(async () => ({ checkpoints: new MemoryCheckpointStore(), close: async () => {} }));
});

describe('checkpoints on SQLite', () => {
  snapshotCases(tempSqliteLog);
});

describe.skipIf(database === undefined)(
  database
    ? 'checkpoints on PostgreSQL'
    : `checkpoints on PostgreSQL (skipped: ${postgresUnavailableReason})`,
  () => {
    snapshotCases(async () => {
      const { store, driver } = await openPostgresStore({ connectionString: database!.url });
      return { checkpoints: new SqlCheckpointStore(driver), close: () => store.close() };
    });

    it('a snapshot an earlier version saved as jsonb comes back identical after the upgrade', async () => {
      const earlier = (await freshPostgresDatabase())!;
      const { store, driver } = await openPostgresStore({ connectionString: earlier.url });
      try {
        // The table as earlier versions left it: snapshots in `jsonb`, wrapped where `jsonb`
        // refuses their JSON text, as the event store still writes events.
        await driver.exec(`
          ALTER TABLE projection_checkpoints ALTER COLUMN state TYPE jsonb USING state::jsonb;
          DELETE FROM schema_migrations WHERE name = '008_checkpoint_snapshots_as_text.sql'`);
        for (const [index, state] of snapshots.entries()) {
          await driver.query(
            'INSERT INTO projection_checkpoints (name, version, position, state) VALUES ($1, 1, $2, $3::jsonb)',
            [`earlier-${index}`, index, toJsonbText(state)],
          );
        }
        await driver.query('INSERT INTO projection_checkpoints (name, version, position) VALUES ($1, 1, 0)', [
          'no-snapshot',
        ]);

        expect((await migrate(driver)).applied).toEqual(['008_checkpoint_snapshots_as_text.sql']);

        const checkpoints = new SqlCheckpointStore(driver);
        for (const [index, state] of snapshots.entries()) {
          expect(await checkpoints.load(`earlier-${index}`)).toEqual({
            schemaVersion: 1,
            position: index,
            state,
          });
        }
        expect(await checkpoints.load('no-snapshot')).toEqual({ schemaVersion: 1, position: 0 });
      } finally {
        await store.close();
        await earlier.drop();
      }
    });
  },
);
