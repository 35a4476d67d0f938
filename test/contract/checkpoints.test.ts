import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toJsonbText } from '../../shared/event-store/json-codec.ts';
import { migrate } from '../../shared/event-store/migrations.ts';
import { openPostgresStore } from '../../shared/event-store/postgres.ts';
import {
  type CheckpointStore,
  MemoryCheckpointStore,
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
