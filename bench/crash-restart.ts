/**
 * What a crash under load leaves the embedded store to do: `studio start` (SQLite, as `npm start`
 * runs it) answers governed chat completions (a budget and rate limits set; a closed loop of 50
 * connections against the mock upstream) for BENCH_CRASH_SECONDS (default 120, quick 20), printing
 * every 10 s its req/s and the sizes of the log's WAL file and of the log with its WAL; then the
 * process is killed (SIGKILL) and started again on copies of what it left (BENCH_REPS, default 3,
 * quick 1): the time to `/health`, which includes SQLite's recovery of the WAL. Last,
 * a start after a clean stop, for comparison.
 *   node --import tsx bench/crash-restart.ts
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnReady } from './gateway/processes.ts';
import { loadStudio, setUpBenchStudio } from './gateway/studio.ts';
import { positiveFromEnv, switchFromEnv } from './lib/env.ts';
import { startStudio } from './lib/startup.ts';
import { percentile, round3 } from './lib/stats.ts';

const quick = switchFromEnv('BENCH_QUICK');
const seconds = positiveFromEnv('BENCH_CRASH_SECONDS', { integer: true }) ?? (quick ? 20 : 120);
const reps = positiveFromEnv('BENCH_REPS', { integer: true }) ?? (quick ? 1 : 3);
const STEP_S = 10;
const log = (message: string) => process.stderr.write(`[bench:crash-restart] ${message}\n`);

const megabytes = (path: string) =>
  Number(execFileSync('du', ['-sk', path]).toString().split('\t')[0]) / 1024;

const parent = await mkdtemp(join(tmpdir(), 'studio-bench-crash-'));
const dataDir = join(parent, 'crashed');
const mock = await spawnReady('mock upstream', ['--import', 'tsx', 'bench/gateway/mock-upstream.ts'], {});
try {
  const env = {
    // Warnings only: the request log under load would go through a pipe this process (the load
    // generator) reads.
    LOG_LEVEL: 'warn',
    OPENAI_COMPATIBLE_BASE_URL: `${mock.url}/v1`,
    OPENAI_COMPATIBLE_MODELS: 'bench',
    OPENAI_COMPATIBLE_API_KEY: 'sk-bench-crash-restart',
  };
  const sizes = () => {
    const log = join(dataDir, 'log.sqlite');
    const wal = megabytes(`${log}-wal`);
    return `${round3(wal)} | ${round3(megabytes(log) + wal)}`;
  };
  const loaded = await startStudio(dataDir, { env });
  const adminKey = readFileSync(join(dataDir, 'admin.key'), 'utf8').trim();
  const token = await setUpBenchStudio(loaded.origin, adminKey, { governed: true });
  const rows = [`| 0 | – | ${sizes()} |`];
  for (let at = STEP_S; at <= seconds; at += STEP_S) {
    const { ok, ms } = await loadStudio({ child: { url: loaded.origin }, token }, false, STEP_S * 1000);
    rows.push(`| ${at} | ${round3((ok / ms) * 1000)} | ${sizes()} |`);
    log(rows.at(-1) ?? '');
  }
  await loaded.stop('SIGKILL');

  const afterCrash: number[] = [];
  for (let rep = 0; rep < reps; rep++) {
    const copy = join(parent, `restart-${rep}`);
    await cp(dataDir, copy, { recursive: true });
    const again = await startStudio(copy, { env });
    afterCrash.push(again.startMs);
    log(`restart ${rep + 1} after SIGKILL: ${Math.round(again.startMs)} ms`);
    await again.stop();
    await rm(copy, { recursive: true, force: true });
  }
  // The crashed dir itself recovered once and stopped cleanly, then started again.
  await (await startStudio(dataDir, { env })).stop();
  const clean = await startStudio(dataDir, { env });
  await clean.stop();

  const sorted = [...afterCrash].sort((a, b) => a - b);
  process.stdout.write(
    [
      '## Restart after a crash under load (SQLite)',
      '',
      `${new Date().toISOString().slice(0, 10)}, Node ${process.version}. \`studio start\` under a closed loop of governed chat completions (50 connections), then SIGKILL.`,
      '',
      '| s under load | req/s in the last 10 s | WAL MB | log MB (WAL included) |',
      '|---|---|---|---|',
      ...rows,
      '',
      '| start | to `/health` |',
      '|---|---|',
      `| after SIGKILL (median of ${reps}, range) | ${round3(percentile(sorted, 50) / 1000)} s (${round3((sorted[0] ?? 0) / 1000)}–${round3((sorted.at(-1) ?? 0) / 1000)}) |`,
      `| after a clean stop | ${round3(clean.startMs / 1000)} s |`,
      '',
    ].join('\n'),
  );
} finally {
  await mock.stop();
  await rm(parent, { recursive: true, force: true });
}
