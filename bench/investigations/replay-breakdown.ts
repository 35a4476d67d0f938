/**
 * `node --import tsx bench/investigations/replay-breakdown.ts`: where the time of a cold
 * ProjectionRunner start goes. A diagnosis aid beside `npm run bench`, not part of it. For each
 * store, on the same data set as bench/event-store.ts, interleaved, median of BENCH_REPS:
 *   - subscribe catch-up with the runner's batch size (1,000): the read path alone;
 *   - the same subscription folding every event into the gateway read models, no snapshots: the
 *     least a runner can cost;
 *   - ProjectionRunner.start() with the store's own CheckpointStore (what `npm run bench` measures);
 *   - ProjectionRunner.start() with a MemoryCheckpointStore (its snapshots still serialize the state,
 *     but nothing is written to the database);
 *   - the size of one snapshot of the read models at the end, and the time to JSON.stringify it.
 *
 * Environment: BENCH_REPS (default 3), BENCH_EVENTS (default 100,000), BENCH_TARGETS, DATABASE_URL.
 */

import { GATEWAY_PROJECTIONS } from '../../services/gateway/projections.ts';
import { subscribe } from '../../shared/event-store/subscription.ts';
import { type EventStore, isCaughtUp } from '../../shared/event-store/types.ts';
import { MemoryCheckpointStore } from '../../shared/projections/checkpoints.ts';
import { loadDataset, planDataset } from '../lib/dataset.ts';
import { listFromEnv, positiveFromEnv } from '../lib/env.ts';
import { measureRunnerStart, measureSubscribeCatchUp } from '../lib/measures.ts';
import { round3, summarize } from '../lib/stats.ts';
import { openMemory, openPostgres, openSqlite, type Target } from '../lib/targets.ts';

const REPS = positiveFromEnv('BENCH_REPS', { integer: true }) ?? 3;
const EVENTS = positiveFromEnv('BENCH_EVENTS', { integer: true }) ?? 100_000;
const TARGET_KINDS = ['memory', 'sqlite', 'postgres'] as const;
const TARGETS = listFromEnv('BENCH_TARGETS', TARGET_KINDS, TARGET_KINDS);
const log = (message: string) => process.stderr.write(`[replay] ${message}\n`);

/** A subscription from the start folding every event into fresh gateway read models; events/s. */
async function foldWithoutSnapshots(store: EventStore): Promise<{ perSecond: number; states: unknown[] }> {
  const states = GATEWAY_PROJECTIONS.map((p) => p.initialState());
  const controller = new AbortController();
  const started = performance.now();
  let events = 0;
  try {
    for await (const item of subscribe(store, { signal: controller.signal, batchSize: 1000 })) {
      if (isCaughtUp(item)) break;
      events++;
      for (const [i, projection] of GATEWAY_PROJECTIONS.entries()) {
        if (projection.handles.includes(item.type)) projection.apply(states[i], item);
      }
    }
  } finally {
    controller.abort();
  }
  return { perSecond: (events * 1000) / (performance.now() - started), states };
}

type Column = 'subscribe' | 'fold' | 'runner' | 'runnerMemoryCheckpoints';
const COLUMNS: Column[] = ['subscribe', 'fold', 'runner', 'runnerMemoryCheckpoints'];

async function main(): Promise<void> {
  const plan = planDataset(EVENTS);
  const targets: Target[] = [];
  const samples = new Map<Target, Record<Column, number[]>>();
  let snapshot = '';
  try {
    for (const [kind, open] of [
      ['memory', openMemory],
      ['sqlite', openSqlite],
      ['postgres', openPostgres],
    ] as const) {
      if (!TARGETS.includes(kind)) continue;
      const target = await open();
      targets.push(target);
      if (!target.store) {
        log(`${target.label}: ${target.skipped}`);
        continue;
      }
      await loadDataset(target.store.events, plan);
      samples.set(target, { subscribe: [], fold: [], runner: [], runnerMemoryCheckpoints: [] });
      log(`${target.label}: loaded ${EVENTS} events`);
    }
    for (let rep = 1; rep <= REPS; rep++) {
      for (const [target, s] of samples) {
        const store = target.store!;
        s.subscribe.push((await measureSubscribeCatchUp(store.events, 1000)).perSecond);
        const fold = await foldWithoutSnapshots(store.events);
        s.fold.push(fold.perSecond);
        const runner = await measureRunnerStart(store.events, store.checkpoints, plan.shape, EVENTS);
        s.runner.push(runner.perSecond);
        const memory = await measureRunnerStart(
          store.events,
          new MemoryCheckpointStore(),
          plan.shape,
          EVENTS,
        );
        s.runnerMemoryCheckpoints.push(memory.perSecond);
        if (runner.mismatch || memory.mismatch)
          throw new Error(`wrong read models: ${runner.mismatch ?? memory.mismatch}`);
        log(
          `rep ${rep} ${target.label}: ${COLUMNS.map((c) => `${c} ${round3(s[c].at(-1)!)}`).join(', ')} events/s`,
        );
        snapshot ||= JSON.stringify(fold.states);
      }
    }
  } finally {
    for (const target of targets) await target.dispose();
  }
  const states: unknown = snapshot ? JSON.parse(snapshot) : [];
  const stringify = summarize(
    Array.from({ length: 5 }, () => {
      const started = performance.now();
      JSON.stringify(states);
      return performance.now() - started;
    }),
  )!;
  const fmt = (values: number[]) => {
    const s = summarize(values)!;
    return `${round3(s.median)} (${round3(s.min)}–${round3(s.max)})`;
  };
  const lines = [
    `Cold replay of ${EVENTS.toLocaleString('en-US')} events into the gateway read models, events/s, ` +
      `median of ${REPS} (min–max)`,
    '',
    '| store | subscribe catch-up, batch 1,000 | subscribe + fold, no snapshots | ProjectionRunner.start (store checkpoints) | ProjectionRunner.start (memory checkpoints) |',
    '|---|---|---|---|---|',
    ...[...samples].map(
      ([target, s]) =>
        `| ${target.label} | ${fmt(s.subscribe)} | ${fmt(s.fold)} | ${fmt(s.runner)} | ${fmt(s.runnerMemoryCheckpoints)} |`,
    ),
    '',
    `One snapshot of the three read models at the end: ${round3(snapshot.length / 1e6)} MB of JSON, ` +
      `JSON.stringify ${round3(stringify.median)} ms (median of 5).`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((error: unknown) => {
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
