/**
 * `node --import tsx bench/pglite-append-latency.ts`: how long one append takes on the embedded
 * store, answered, one at a time (what an unloaded request waits for, twice when it is budgeted:
 * its reservation, then its usage), beside a bare `SELECT 1` through the same PGlite thread (the
 * cost of the thread and PGlite's protocol alone). A diagnosis aid beside `npm run bench`.
 * Environment: BENCH_APPENDS (default 1,000 measured, after 500 of warm-up).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openPgliteStore } from '../shared/event-store/pglite.ts';
import { positiveFromEnv } from './lib/env.ts';
import { percentile, round3 } from './lib/stats.ts';
import { usageEvent } from './lib/usage-event.ts';

const count = positiveFromEnv('BENCH_APPENDS', { integer: true }) ?? 1_000;
const WARM_UP = 500;

/** Milliseconds of each of `count` calls of `work`, one after the other, sorted. */
async function timed(work: (i: number) => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < WARM_UP; i++) await work(i);
  const ms: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await work(i);
    ms.push(performance.now() - started);
  }
  return ms.sort((a, b) => a - b);
}

const dir = await mkdtemp(join(tmpdir(), 'studio-bench-pglite-latency-'));
const { store, driver } = await openPgliteStore(join(dir, 'data'));
try {
  const appends = await timed((i) =>
    store.append(`usage-bench-${i % 3}`, [usageEvent()], { expected: 'any', metadata: { actor: 'gateway' } }),
  );
  const selects = await timed(() => driver.query('SELECT 1'));
  const row = (name: string, ms: number[]) =>
    `| ${name} | ${round3(percentile(ms, 50))} | ${round3(percentile(ms, 90))} | ${round3(percentile(ms, 99))} |`;
  process.stdout.write(
    [
      `PGlite, one call at a time (${count.toLocaleString('en-US')} measured), ms:`,
      '',
      '| call | p50 | p90 | p99 |',
      '|---|---|---|---|',
      row('one append of one event', appends),
      row('`SELECT 1` through the same thread', selects),
      '',
    ].join('\n'),
  );
} finally {
  await driver.close();
  await rm(dir, { recursive: true, force: true });
}
