/**
 * `node --import tsx bench/store-aims.ts` (a section of `npm run bench`): the store, projection and
 * startup aims in one table, each with the way it was done before measured beside it in the same
 * run where that way still exists:
 *   - PostgreSQL appends, 16 writers on a stream each, one event per append with expected revision;
 *   - replay from PostgreSQL: a cold ProjectionRunner over the gateway read models, in a process of
 *     its own (bench/lib/cold-replay.ts), as a restarted gateway replays;
 *   - `studio projections rebuild` of every read model: one pass over the log, against one
 *     type-filtered read of the log per read model (as before), on PostgreSQL and on the embedded
 *     SQLite store;
 *   - `npm start` (`studio start`, as `npmStart` runs it) until `/health` answers 200, on a new and on
 *     an existing data dir.
 *
 * Without PostgreSQL, only the SQLite rebuild and the start-up rows are measured.
 *
 * Environment: BENCH_QUICK=1 (100,000 events, 1 s appends, 1 repetition), BENCH_REPS (default 2),
 * BENCH_AIM_EVENTS (default 1,000,000), BENCH_APPEND_MS (default 3,000), DATABASE_URL.
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { GATEWAY_PROJECTIONS } from '../services/gateway/projections.ts';
import { RUNTIME_PROJECTIONS } from '../services/runtime/projections.ts';
import type { OpenedStore } from '../shared/event-store/open.ts';
import type { EventStore } from '../shared/event-store/types.ts';
import type { CheckpointStore } from '../shared/projections/checkpoints.ts';
import { coldReplay } from './lib/cold-replay.ts';
import { type DatasetShape, loadDataset, planDataset } from './lib/dataset.ts';
import { positiveFromEnv, switchFromEnv } from './lib/env.ts';
import { measureAppends, measureRebuild } from './lib/measures.ts';
import { npmStart } from './lib/server-build.ts';
import { measureStartup } from './lib/startup.ts';
import { round3, summarize } from './lib/stats.ts';
import { baseDatabaseUrl, openPostgres, openSqlite, type Target } from './lib/targets.ts';

const QUICK = switchFromEnv('BENCH_QUICK');
const REPS = positiveFromEnv('BENCH_REPS', { integer: true }) ?? (QUICK ? 1 : 2);
const EVENTS = positiveFromEnv('BENCH_AIM_EVENTS', { integer: true }) ?? (QUICK ? 100_000 : 1_000_000);
const APPEND_MS = positiveFromEnv('BENCH_APPEND_MS', { integer: true }) ?? (QUICK ? 1_000 : 3_000);
const log = (message: string) => process.stderr.write(`[bench:aims] ${message}\n`);

/** The rebuild as it was: each read model reads the log filtered by its own event types. */
async function rebuildOnePassPerProjection(store: EventStore, checkpoints: CheckpointStore): Promise<number> {
  const started = performance.now();
  for (const projection of [...GATEWAY_PROJECTIONS, ...RUNTIME_PROJECTIONS]) {
    const state = projection.initialState();
    let after = 0;
    for (;;) {
      const page = await store.readAll({ after, limit: 5_000, types: projection.handles });
      for (const event of page) projection.apply(state, event);
      after = page.at(-1)?.position ?? after;
      if (page.length < 5_000) break;
    }
    await checkpoints.save(projection.name, {
      schemaVersion: projection.schemaVersion,
      position: after,
      state: projection.toSnapshot(state),
    });
  }
  return performance.now() - started;
}

const fmt = (values: number[], digits: (n: number) => string = round3) => {
  const s = summarize(values);
  if (!s) return '–';
  return s.runs > 1 ? `${digits(s.median)} (${digits(s.min)}–${digits(s.max)})` : digits(s.median);
};
const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;

interface Samples {
  appends: number[];
  replay: number[];
  rebuildAfter: number[];
  rebuildBefore: number[];
  sqliteRebuildAfter: number[];
  sqliteRebuildBefore: number[];
}

/** Both rebuilds, REPS times, of a log of EVENTS events already in `store`. */
async function measureRebuilds(
  store: OpenedStore,
  shape: DatasetShape,
  after: number[],
  before: number[],
  name: string,
) {
  for (let rep = 1; rep <= REPS; rep++) {
    const rebuild = await measureRebuild(store.events, store.checkpoints, shape, EVENTS);
    if (rebuild.mismatch) throw new Error(`rebuild on ${name}: ${rebuild.mismatch}`);
    after.push(rebuild.ms);
    before.push(await rebuildOnePassPerProjection(store.events, store.checkpoints));
    log(
      `${name} rebuild rep ${rep}: ${seconds(rebuild.ms)} (one read per read model ${seconds(before.at(-1)!)})`,
    );
  }
}

/** The rebuild on the embedded store, as `studio projections rebuild` runs on a data dir. */
async function measureSqlite(samples: Samples): Promise<string> {
  const target = await openSqlite();
  try {
    const plan = planDataset(EVENTS);
    log(`loading ${EVENTS.toLocaleString('en-US')} events into SQLite`);
    await loadDataset(target.store!.events, plan);
    await measureRebuilds(
      target.store!,
      plan.shape,
      samples.sqliteRebuildAfter,
      samples.sqliteRebuildBefore,
      'SQLite',
    );
    return target.facts.join('; ');
  } finally {
    await target.dispose();
  }
}

/** Appends, replay and rebuild on the PostgreSQL of `target`, into `samples`. */
async function measureStore(target: Target & { store: OpenedStore }, samples: Samples): Promise<void> {
  const dbUrl = new URL(baseDatabaseUrl());
  dbUrl.pathname = `/${target.facts[0]?.match(/database (\S+)/)?.[1] ?? ''}`;
  const pool = new pg.Pool({ connectionString: dbUrl.toString(), max: 1 });
  pool.on('error', () => undefined);
  const { events } = target.store;
  try {
    // A log of EVENTS events for replay and rebuild.
    const plan = planDataset(EVENTS);
    log(`loading ${EVENTS.toLocaleString('en-US')} events`);
    await loadDataset(events, plan);
    // As a log at rest is (a restart replays a log autovacuum has long since visited): the replay is
    // not measured against the vacuum of the rows just loaded.
    await pool.query('VACUUM (ANALYZE) events');
    for (let rep = 1; rep <= REPS; rep++) {
      const replay = await coldReplay(dbUrl.toString(), EVENTS);
      if (replay.mismatch) throw new Error(`replay: ${replay.mismatch}`);
      samples.replay.push(replay.perSecond);
      log(`replay rep ${rep}: ${round3(samples.replay.at(-1)!)} events/s`);
    }
    await measureRebuilds(
      target.store,
      plan.shape,
      samples.rebuildAfter,
      samples.rebuildBefore,
      'PostgreSQL',
    );

    // Last: their events (TokenIssued) would be counted by the read models checked above.
    for (let rep = 1; rep <= REPS; rep++) {
      const budget = { ms: APPEND_MS, maxOps: 1e9 };
      samples.appends.push((await measureAppends(events, `a${rep}`, 16, 1, budget)).perSecond);
      log(`appends rep ${rep}: ${round3(samples.appends.at(-1)!)}/s`);
    }
  } finally {
    await pool.end().catch(() => undefined);
  }
}

async function main(): Promise<void> {
  const load0 = loadavg()[0]!;
  const samples: Samples = {
    appends: [],
    replay: [],
    rebuildAfter: [],
    rebuildBefore: [],
    sqliteRebuildAfter: [],
    sqliteRebuildBefore: [],
  };
  const target = await openPostgres();
  try {
    if (target.store) await measureStore({ ...target, store: target.store }, samples);
    else log(`PostgreSQL: not run: ${target.skipped}`);
  } finally {
    await target.dispose();
  }
  const sqliteFacts = await measureSqlite(samples);

  // Start-up needs no PostgreSQL: `npm start` runs on SQLite.
  const start = await npmStart();
  const startNew: number[] = [];
  const startExisting: number[] = [];
  for (let rep = 1; rep <= REPS; rep++) {
    const fresh = await measureStartup(start.nodeArgs);
    startNew.push(fresh.newDirMs);
    startExisting.push(fresh.existingDirMs);
    log(`start rep ${rep}: new dir ${seconds(fresh.newDirMs)}, existing ${seconds(fresh.existingDirMs)}`);
  }

  const met = (ok: boolean) => (ok ? '**met**' : 'not met');
  const med = (values: number[]) => summarize(values)?.median ?? Number.NaN;
  /** A row of the table, or where PostgreSQL could not be reached, why it was not measured. */
  const row = (cells: string[], onPostgres = false) =>
    `| ${(onPostgres && !target.store ? [cells[0]!, cells[1]!, '–', `not run: ${target.skipped}`, '–'] : cells).join(' | ')} |`;
  const lines = [
    '## Store, projections and startup: the aims',
    '',
    `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, load average ${load0.toFixed(1)} at start, ` +
      `${loadavg()[0]!.toFixed(1)} at the end; median of ${REPS} (min–max); ${[...target.facts, sqliteFacts].join('; ')}. ` +
      `Log for replay and rebuild: ${EVENTS.toLocaleString('en-US')} events (bench/lib/dataset.ts). ` +
      `\`npm start\`: \`studio start\` (gateway and agent runtime) on SQLite, ${start.how}.`,
    '',
    '| aim | target | before (same run) | now | |',
    '|---|---|---|---|---|',
    row(
      [
        'PostgreSQL appends, 16 writers (events/s)',
        '≥ 5,000',
        '–',
        `${fmt(samples.appends)} (group commit)`,
        met(med(samples.appends) >= 5_000),
      ],
      true,
    ),
    row(
      [
        'replay from PostgreSQL into the gateway read models (events/s)',
        '≥ 150,000',
        '–',
        fmt(samples.replay),
        met(med(samples.replay) >= 150_000),
      ],
      true,
    ),
    row(
      [
        `\`projections rebuild\` on PostgreSQL, every read model, ${EVENTS.toLocaleString('en-US')} events`,
        '≤ 30 s for 1,000,000',
        `${fmt(samples.rebuildBefore, seconds)} (one read per read model)`,
        `${fmt(samples.rebuildAfter, seconds)} (one pass)`,
        EVENTS === 1_000_000 ? met(med(samples.rebuildAfter) <= 30_000) : 'not the aim’s size',
      ],
      true,
    ),
    row([
      `\`projections rebuild\` on SQLite, every read model, ${EVENTS.toLocaleString('en-US')} events`,
      '≤ 15 s for 1,000,000',
      `${fmt(samples.sqliteRebuildBefore, seconds)} (one read per read model)`,
      `${fmt(samples.sqliteRebuildAfter, seconds)} (one pass)`,
      EVENTS === 1_000_000 ? met(med(samples.sqliteRebuildAfter) <= 15_000) : 'not the aim’s size',
    ]),
    row([
      '`npm start` to `/health`, existing data dir',
      '≤ 1 s',
      '–',
      fmt(startExisting, seconds),
      met(med(startExisting) <= 1_000),
    ]),
    row([
      '`npm start` to `/health`, new data dir',
      '≤ 2 s',
      '–',
      fmt(startNew, seconds),
      met(med(startNew) <= 2_000),
    ]),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error: unknown) => {
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
