/**
 * Does the embedded log's WAL start again from its beginning under a load that never pauses, or
 * does it grow? Studio as `studio start`, governed, on SQLite, asked for JSON chat completions at
 * an even BENCH_RATE (default 1000) for BENCH_SECONDS (default 20) after a warm-up; the WAL's file
 * size, last frame and frames copied are read every 250 ms from its files (`-wal`, `-shm`). Prints
 * how often it started again, how large its file grew, and the p50 and p99.
 *   node --import tsx bench/investigations/gateway/wal-cycle.ts
 */
import { closeSync, existsSync, openSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readWalIndex } from '../../../shared/event-store/sqlite/wal-index.mjs';
import { openLoop } from '../../gateway/open-loop.ts';
import { chatRequestBody } from '../../gateway/settings.ts';
import { withStudioTarget } from '../../gateway/studio.ts';
import { positiveFromEnv } from '../../lib/env.ts';
import { percentile, round3 } from '../../lib/stats.ts';

const RATE = positiveFromEnv('BENCH_RATE', { integer: true }) ?? 1_000;
const SECONDS = positiveFromEnv('BENCH_SECONDS') ?? 20;
const MIB = 1024 * 1024;

await withStudioTarget(
  'wal-cycle',
  () => ({ store: 'sqlite', governed: true }),
  async (studio, dir) => {
    const file = join(dir, 'studio-data', 'log.sqlite');
    const options = {
      origin: studio.child.url,
      path: '/v1/ai/chat/completions',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${studio.token}` },
      body: chatRequestBody('compat/bench'),
      valid: (status: number) => status === 200,
    };
    await openLoop({ ...options, rate: 500, durationMs: 2_000 });
    if (!existsSync(`${file}-shm`)) throw new Error(`no WAL index at ${file}-shm`);
    const index = openSync(`${file}-shm`, 'r');
    let restarts = 0;
    let lastFrames = 0;
    let largest = 0;
    let mostFrames = 0;
    const timer = setInterval(() => {
      const { frames } = readWalIndex(index);
      if (frames < lastFrames) restarts++;
      lastFrames = frames;
      mostFrames = Math.max(mostFrames, frames);
      largest = Math.max(largest, statSync(`${file}-wal`).size);
    }, 250);
    try {
      const result = await openLoop({ ...options, rate: RATE, durationMs: SECONDS * 1_000 });
      process.stdout.write(
        [
          `Studio (\`studio start\`, governed, SQLite) at an even ${RATE} req/s for ${SECONDS} s`,
          '',
          '| WAL started again (seen) | WAL file at most | WAL frames at most | p50 | p99 | errors |',
          '|---|---|---|---|---|---|',
          `| ${restarts} | ${round3(largest / MIB)} MiB | ${mostFrames} | ${round3(percentile(result.total, 50))} ms | ${round3(percentile(result.total, 99))} ms | ${result.errors} |`,
          '',
        ].join('\n'),
      );
    } finally {
      clearInterval(timer);
      closeSync(index);
    }
  },
);
