/**
 * `npm start` (`studio start`: gateway and agent runtime, ports 0, SQLite, log level as set) until
 * `/health` answers 200, on a new and on an existing data dir, against the aims: ≤ 1 s on an
 * existing data dir, ≤ 2 s on a new one. This checkout runs as `npm start` runs it (see `npmStart`:
 * its build, compiled for the run when dist/server is older than the sources); with
 * `BENCH_STARTUP_BEFORE` (a folder holding bin/studio.mjs, e.g. a worktree of the commit before),
 * that checkout too, interleaved. `BENCH_REPS` repetitions (default 5, quick 2); prints the medians.
 */
import { join } from 'node:path';
import { positiveFromEnv, switchFromEnv } from '../lib/env.ts';
import { npmStart } from '../lib/server-build.ts';
import { measureStartup } from '../lib/startup.ts';

const AIM_EXISTING_MS = 1_000;
const AIM_NEW_MS = 2_000;
const REPS = positiveFromEnv('BENCH_REPS', { integer: true }) ?? (switchFromEnv('BENCH_QUICK') ? 2 : 5);

const now = await npmStart();
const targets: Record<string, readonly string[]> = { now: now.nodeArgs };
if (process.env.BENCH_STARTUP_BEFORE)
  targets.before = [join(process.env.BENCH_STARTUP_BEFORE, 'bin', 'studio.mjs')];

const samples: Record<string, { newDir: number[]; existingDir: number[] }> = {};
for (let rep = 1; rep <= REPS; rep++) {
  for (const [name, studio] of Object.entries(targets)) {
    const { newDirMs, existingDirMs } = await measureStartup(studio);
    samples[name] ??= { newDir: [], existingDir: [] };
    samples[name].newDir.push(newDirMs);
    samples[name].existingDir.push(existingDirMs);
    process.stderr.write(
      `rep ${rep} ${name}: new ${Math.round(newDirMs)} ms, existing ${Math.round(existingDirMs)} ms\n`,
    );
  }
}
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const range = (values: number[]) =>
  `${(median(values) / 1000).toFixed(2)} s (${(Math.min(...values) / 1000).toFixed(2)}–${(Math.max(...values) / 1000).toFixed(2)})`;
const met = (values: number[], aimMs: number) => (median(values) <= aimMs ? 'yes' : 'no');
const lines = [
  '## Start-up: `npm start` to `/health`',
  '',
  `${new Date().toISOString().slice(0, 10)}, Node ${process.version}; \`studio start\` (gateway and agent runtime), ` +
    `SQLite, LOG_LEVEL ${process.env.LOG_LEVEL || 'unset (info)'}; median (min–max) of ${REPS}. now: ${now.how}` +
    `${targets.before ? `; before: ${targets.before[0]}` : ''}.`,
  '',
  `| checkout | existing data dir | ≤ ${AIM_EXISTING_MS / 1000} s | new data dir | ≤ ${AIM_NEW_MS / 1000} s |`,
  '|---|---|---|---|---|',
  ...Object.entries(samples).map(
    ([name, s]) =>
      `| ${name} | ${range(s.existingDir)} | ${met(s.existingDir, AIM_EXISTING_MS)} | ${range(s.newDir)} | ${met(s.newDir, AIM_NEW_MS)} |`,
  ),
];
process.stdout.write(`${lines.join('\n')}\n`);
