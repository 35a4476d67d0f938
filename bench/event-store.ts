/**
 * The event store and projection benchmarks (run by `npm run bench`, or alone with
 * `node --import tsx bench/event-store.ts`), side by side for every adapter (memory, SQLite,
 * PostgreSQL), printed as one markdown table. See docs/benchmarks.md.
 *
 * Environment:
 *   BENCH_QUICK=1        a short smoke run (small data set, short time boxes, 2 repetitions)
 *   BENCH_REPS=N         repetitions of every measurement (default 3, quick 2)
 *   BENCH_EVENTS=N       events in the replay data set (default 100,000, quick 20,000)
 *   BENCH_APPEND_MS=N    time box of each append measurement (default 3,000, quick 500)
 *   BENCH_TARGETS=a,b    subset of memory,sqlite,postgres
 *   DATABASE_URL         PostgreSQL server to create the bench database on
 *                        (default postgresql://postgres@127.0.0.1:5432/postgres)
 */
import { readFile } from 'node:fs/promises';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { type DatasetShape, loadDataset, planDataset } from './lib/dataset.ts';
import { listFromEnv, positiveFromEnv, switchFromEnv } from './lib/env.ts';
import {
  type Budget,
  measureAppends,
  measureReadAll,
  measureRebuild,
  measureRunnerStart,
  measureSubscribeCatchUp,
  type RateResult,
  type ReplayResult,
} from './lib/measures.ts';
import { formatDuration, formatRate, round3, type Summary, summarize } from './lib/stats.ts';
import { openMemory, openPostgres, openSqlite, type Target, type TargetKind } from './lib/targets.ts';

const QUICK = switchFromEnv('BENCH_QUICK');
const REPS = positiveFromEnv('BENCH_REPS', { integer: true }) ?? (QUICK ? 2 : 3);
const EVENTS = positiveFromEnv('BENCH_EVENTS', { integer: true }) ?? (QUICK ? 20_000 : 100_000);
const APPEND_MS = positiveFromEnv('BENCH_APPEND_MS', { integer: true }) ?? (QUICK ? 500 : 3_000);
/** Count bound of an append measurement, so the memory store does not grow without end. */
const APPEND_MAX_OPS = QUICK ? 10_000 : 50_000;
const READ_PAGE = 5_000;
const WRITERS = 16;
/** The single writer round-robins over a few streams. */
const SINGLE_WRITER_STREAMS = 4;
const TARGET_KINDS: readonly TargetKind[] = ['memory', 'sqlite', 'postgres'];
const TARGETS = listFromEnv('BENCH_TARGETS', TARGET_KINDS, TARGET_KINDS);

const AIM_POSTGRES_APPENDS_16 = 5_000;
const AIM_REPLAY_EVENTS_PER_S = 150_000;

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

type Metric = 'append1' | 'append16' | 'readAll' | 'subscribe' | 'rebuild' | 'runner';

interface Row {
  target: Target;
  load?: RateResult;
  samples: Record<Metric, number[]>;
  errors: string[];
}

const rows: Row[] = [];
const disposers: (() => Promise<void>)[] = [];

async function disposeAll(): Promise<void> {
  for (const dispose of disposers.splice(0)) {
    await dispose().catch((error: unknown) => log(`cleanup failed: ${String(error)}`));
  }
}

/** Set on SIGINT/SIGTERM: the stores are being closed under the running measurement; report nothing. */
let interrupted = false;

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true;
    log(`${signal}: closing the stores, removing the temp dir and the bench database`);
    void disposeAll().finally(() => process.exit(130));
  });
}

async function open(kind: TargetKind): Promise<Target> {
  switch (kind) {
    case 'memory':
      return openMemory();
    case 'sqlite':
      return openSqlite();
    case 'postgres':
      return openPostgres();
  }
}

/** Runs one measurement of one target; a failure is recorded and the target is left out of later ones. */
async function sample(row: Row, metric: Metric, work: () => Promise<number>, show: (v: number) => string) {
  if (!row.target.store || row.errors.length > 0 || interrupted) return;
  try {
    const value = await work();
    row.samples[metric].push(value);
    log(`  ${row.target.label.padEnd(10)} ${metric.padEnd(9)} ${show(value)}`);
  } catch (error) {
    if (interrupted) return;
    row.errors.push(`${metric}: ${error instanceof Error ? error.message : String(error)}`);
    log(
      `  ${row.target.label} ${metric} FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
  }
}

const perSecond = (v: number) => `${round3(v)} events/s`;
const millis = (v: number) => `${round3(v)} ms`;

function checkReplay(what: string, result: ReplayResult): number {
  if (result.mismatch) throw new Error(`${what} built wrong read models: ${result.mismatch}`);
  return result.ms;
}

async function packageVersion(name: string): Promise<string> {
  try {
    const json = await readFile(new URL(`../node_modules/${name}/package.json`, import.meta.url), 'utf8');
    return (JSON.parse(json) as { version: string }).version;
  } catch {
    return '?';
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  const date = new Date();
  const loadAtStart = loadavg()[0]!;
  log(
    `${QUICK ? 'QUICK smoke run' : 'full run'}: ${REPS} repetitions, ${EVENTS.toLocaleString('en-US')} events, ` +
      `append time box ${APPEND_MS} ms, targets ${TARGETS.join(', ')}`,
  );

  for (const kind of TARGETS) {
    const target = await open(kind);
    disposers.push(() => target.dispose());
    rows.push({
      target,
      samples: { append1: [], append16: [], readAll: [], subscribe: [], rebuild: [], runner: [] },
      errors: [],
    });
    log(`${target.label}: ${target.skipped ?? 'open'}`);
  }

  // 1. The replay data set, loaded with batched appends (one load per store, timed as context).
  const plan = planDataset(EVENTS);
  const shape: DatasetShape = plan.shape;
  log(
    `data set: ${shape.total} events = ${shape.studios} studios (${shape.tokens} tokens issued, ${shape.revoked} revoked, ` +
      `${shape.paused} paused) + ${shape.envEvents} EnvVariableSet over ${shape.envKeys} keys`,
  );
  for (const row of rows) {
    const store = row.target.store;
    if (!store || interrupted) continue;
    try {
      const t0 = performance.now();
      await loadDataset(store.events, plan);
      const ms = performance.now() - t0;
      row.load = { ops: shape.total, ms, perSecond: (shape.total * 1000) / ms };
      const count = (await store.events.readAll({ limit: shape.total + 1 })).length;
      if (count !== shape.total) throw new Error(`loaded ${count} events, expected ${shape.total}`);
      log(`  ${row.target.label.padEnd(10)} load      ${perSecond(row.load.perSecond)} (${millis(ms)})`);
    } catch (error) {
      if (interrupted) break;
      row.errors.push(`load: ${error instanceof Error ? error.message : String(error)}`);
      log(`  ${row.target.label} load FAILED: ${String(error)}`);
    }
  }

  // 2. Reads and replays of the data set, interleaved: every target per measurement per repetition.
  for (let rep = 1; rep <= REPS && !interrupted; rep++) {
    log(`reads, repetition ${rep}/${REPS}`);
    for (const row of rows) {
      await sample(
        row,
        'readAll',
        async () => (await measureReadAll(row.target.store!.events, READ_PAGE)).perSecond,
        perSecond,
      );
    }
    for (const row of rows) {
      await sample(
        row,
        'subscribe',
        async () => (await measureSubscribeCatchUp(row.target.store!.events)).perSecond,
        perSecond,
      );
    }
    for (const row of rows) {
      await sample(
        row,
        'rebuild',
        async () =>
          checkReplay(
            'rebuild',
            await measureRebuild(row.target.store!.events, row.target.store!.checkpoints, shape, shape.total),
          ),
        millis,
      );
    }
    for (const row of rows) {
      await sample(
        row,
        'runner',
        async () =>
          checkReplay(
            'runner',
            await measureRunnerStart(
              row.target.store!.events,
              row.target.store!.checkpoints,
              shape,
              shape.total,
            ),
          ),
        millis,
      );
    }
  }

  // 3. Appends, after the reads so they do not change the replayed log. A short untimed warm-up
  //    first opens the connection pool and warms the JIT.
  const budget: Budget = { ms: APPEND_MS, maxOps: APPEND_MAX_OPS };
  if (!interrupted) log('appends: warm-up');
  for (const row of rows) {
    if (!row.target.store || row.errors.length > 0 || interrupted) continue;
    await measureAppends(row.target.store.events, 'warmup', WRITERS, 1, { ms: 300, maxOps: 2_000 });
  }
  for (let rep = 1; rep <= REPS && !interrupted; rep++) {
    log(`appends, repetition ${rep}/${REPS}`);
    for (const row of rows) {
      await sample(
        row,
        'append1',
        async () =>
          (await measureAppends(row.target.store!.events, `r${rep}-one`, 1, SINGLE_WRITER_STREAMS, budget))
            .perSecond,
        perSecond,
      );
    }
    for (const row of rows) {
      await sample(
        row,
        'append16',
        async () =>
          (await measureAppends(row.target.store!.events, `r${rep}-many`, WRITERS, 1, budget)).perSecond,
        perSecond,
      );
    }
  }

  await disposeAll();
  if (interrupted) return;
  const elapsed = (performance.now() - started) / 1000;
  await report(date, shape, elapsed, [loadAtStart, loadavg()[0]!]);
}

async function report(
  date: Date,
  shape: DatasetShape,
  elapsedSeconds: number,
  [loadAtStart, loadAtEnd]: [number, number],
): Promise<void> {
  const cpuList = cpus();
  const [sqlite, pgDriver, tsx] = await Promise.all([
    packageVersion('better-sqlite3'),
    packageVersion('pg'),
    packageVersion('tsx'),
  ]);
  const out: string[] = [];
  out.push(
    `## Event store and projections (${QUICK ? 'BENCH_QUICK=1 smoke run, not for publishing' : 'full run'})`,
  );
  out.push('');
  out.push(`- Date: ${date.toISOString()}`);
  out.push(
    `- Machine: ${cpuList.length} CPUs (${cpuList[0]?.model.trim() ?? '?'}), ${round3(totalmem() / 2 ** 30)} GiB RAM, ` +
      `${process.platform} ${release()}`,
  );
  out.push(`- Node ${process.version}; better-sqlite3 ${sqlite}; pg ${pgDriver}; tsx ${tsx}`);
  out.push(
    `- Load average (1 min) at start ${loadAtStart.toFixed(2)}, at end ${loadAtEnd.toFixed(2)} ` +
      `(${cpuList.length} CPUs; above that, other processes were competing for them)`,
  );
  for (const row of rows) for (const fact of row.target.facts) out.push(`- ${fact}`);
  out.push(
    `- Each figure: median of ${REPS} interleaved repetitions (${rows.map((r) => r.target.label).join(', ')} in turn), min–max in brackets. ` +
      `Appends: time box ${round3(APPEND_MS / 1000)} s or ${APPEND_MAX_OPS.toLocaleString('en-US')} appends, ` +
      `one event per append, with expected revision; 1 writer round-robin over ${SINGLE_WRITER_STREAMS} streams, ` +
      `${WRITERS} writers on a stream each.`,
  );
  out.push(
    `- Replay data set: ${shape.total.toLocaleString('en-US')} events: ${shape.studios.toLocaleString('en-US')} studio streams ` +
      `(StudioCreated, ${shape.tokens.toLocaleString('en-US')} TokenIssued, ${shape.revoked.toLocaleString('en-US')} TokenRevoked, ` +
      `${shape.paused} StudioPaused) and the env stream (${shape.envEvents.toLocaleString('en-US')} EnvVariableSet over ` +
      `${shape.envKeys} keys). readAll pages of ${READ_PAGE.toLocaleString('en-US')}; subscribe with its default batch (500); ` +
      `rebuild = every read model (gateway and runtime) in one pass, as \`studio projections rebuild\`; runner = a cold ProjectionRunner over the three ` +
      `(checkpoints reset) until start() resolves; events/s = log events / time.`,
  );
  out.push('');
  out.push(
    '| store | append, 1 writer (events/s) | append, 16 writers (events/s) | readAll (events/s) | subscribe catch-up (events/s) | ' +
      'rebuild, all read models (time) | runner start (time) | runner replay (events/s) | batched load (events/s) |',
  );
  out.push('|---|---|---|---|---|---|---|---|---|');
  for (const row of rows) {
    if (!row.target.store) {
      out.push(`| ${row.target.label} | ${row.target.skipped ?? 'not run'} | – | – | – | – | – | – | – |`);
      continue;
    }
    const s = (metric: Metric) => summarize(row.samples[metric]);
    const eventsPerSecond = (ms: Summary | undefined): Summary | undefined =>
      ms && {
        median: (shape.total * 1000) / ms.median,
        min: (shape.total * 1000) / ms.max,
        max: (shape.total * 1000) / ms.min,
        runs: ms.runs,
      };
    out.push(
      `| ${row.target.label} | ${formatRate(s('append1'))} | ${formatRate(s('append16'))} | ${formatRate(s('readAll'))} | ` +
        `${formatRate(s('subscribe'))} | ${formatDuration(s('rebuild'))} | ${formatDuration(s('runner'))} | ` +
        `${formatRate(eventsPerSecond(s('runner')))} | ${row.load ? round3(row.load.perSecond) : '–'} |`,
    );
  }
  out.push('');

  out.push('Aims:');
  const postgres = rows.find((r) => r.target.kind === 'postgres');
  const pg16 = postgres && summarize(postgres.samples.append16);
  out.push(
    `- PostgreSQL ≥ ${AIM_POSTGRES_APPENDS_16.toLocaleString('en-US')} appends/s with ${WRITERS} writers: ` +
      (pg16
        ? `${round3(pg16.median)} → ${pg16.median >= AIM_POSTGRES_APPENDS_16 ? 'MET' : 'NOT MET'}`
        : 'not measured'),
  );
  const replay = rows
    .filter((r) => r.samples.runner.length > 0)
    .map((r) => {
      const median = summarize(r.samples.runner)!.median;
      const eps = (shape.total * 1000) / median;
      const rebuild = summarize(r.samples.rebuild);
      const rebuildEps = rebuild ? ` (rebuild ${round3((shape.total * 1000) / rebuild.median)})` : '';
      return `${r.target.label} ${round3(eps)}${rebuildEps} → ${eps >= AIM_REPLAY_EVENTS_PER_S ? 'MET' : 'NOT MET'}`;
    });
  out.push(
    `- Replay into in-memory read models ≥ ${AIM_REPLAY_EVENTS_PER_S.toLocaleString('en-US')} events/s (runner): ` +
      (replay.length > 0 ? replay.join('; ') : 'not measured'),
  );
  const failures = rows.flatMap((r) => r.errors.map((e) => `${r.target.label}: ${e}`));
  if (failures.length > 0) {
    out.push('');
    out.push('Failures (those cells are missing):');
    for (const failure of failures) out.push(`- ${failure}`);
  }
  out.push('');
  out.push(`Whole run: ${round3(elapsedSeconds)} s.`);
  process.stdout.write(`${out.join('\n')}\n`);
  if (failures.length > 0) process.exitCode = 1;
}

main().catch(async (error: unknown) => {
  if (interrupted) return;
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  await disposeAll();
  process.exitCode = 1;
});
