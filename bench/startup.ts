/**
 * `studio start` (ports 0, SQLite) until `/health` answers 200, on a new and on an existing data
 * dir: this checkout against another one (`BENCH_STARTUP_BEFORE`, a folder holding bin/studio.mjs,
 * e.g. a worktree of the commit before), interleaved. `BENCH_REPS` repetitions (default 5); prints
 * the medians. Run `npm run build:server` first, or this checkout runs through tsx.
 */
import { join } from 'node:path';
import { measureStartup } from './lib/startup.ts';

const REPS = Number(process.env.BENCH_REPS ?? 5);
const targets: Record<string, string> = { now: join(import.meta.dirname, '..', 'bin', 'studio.mjs') };
if (process.env.BENCH_STARTUP_BEFORE)
  targets.before = join(process.env.BENCH_STARTUP_BEFORE, 'bin', 'studio.mjs');

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
process.stdout.write('| checkout | existing data dir | new data dir |\n|---|---|---|\n');
for (const [name, s] of Object.entries(samples))
  process.stdout.write(`| ${name} | ${range(s.existingDir)} | ${range(s.newDir)} |\n`);
